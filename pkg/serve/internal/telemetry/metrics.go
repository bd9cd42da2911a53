package telemetry

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the Prometheus series of one server, in a registry of its own.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// inFlight counts the requests being served, per front (InFlight).
	inFlight [2]prometheus.Gauge
	// series caches each label set's counter and histogram: a vector hashes every label value
	// on every lookup (two lookups per request). Label sets are few: served routes × codes.
	series sync.Map // seriesKey -> *series
}

type seriesKey struct{ front, route, code string }

type series struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// NewMetrics makes the registry of a service, with the Go and process collectors and the request
// series.
func NewMetrics(service string) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	labels := prometheus.Labels{"service": service}
	m := &Metrics{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "yardstick_requests_total", Help: "Requests by front (http or grpc), route and status code.",
			ConstLabels: labels,
		}, []string{"front", "route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "yardstick_request_duration_seconds", Help: "Request latency by front and route.",
			ConstLabels: labels,
			Buckets:     []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"front", "route"}),
	}
	inFlight := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "yardstick_requests_in_flight", Help: "Requests being served now, by front (http or grpc).", ConstLabels: labels,
	}, []string{"front"})
	m.inFlight = [2]prometheus.Gauge{inFlight.WithLabelValues("http"), inFlight.WithLabelValues("grpc")}
	reg.MustRegister(m.requests, m.latency, inFlight)
	return m
}

// Fronts, the front label's values.
const (
	FrontHTTP = "http"
	FrontGRPC = "grpc"
)

// InFlight is the gauge of the requests front is serving: Inc as one starts, Dec as it ends.
func (m *Metrics) InFlight(front string) prometheus.Gauge {
	if front == FrontGRPC {
		return m.inFlight[1]
	}
	return m.inFlight[0]
}

// Observe counts one request and its latency.
func (m *Metrics) Observe(front, route, code string, d time.Duration) {
	k := seriesKey{front, route, code}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, &series{m.requests.WithLabelValues(front, route, code), m.latency.WithLabelValues(front, route)})
	}
	se := v.(*series)
	se.requests.Inc()
	se.latency.Observe(d.Seconds())
}
