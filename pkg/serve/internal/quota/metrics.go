package quota

import (
	"github.com/prometheus/client_golang/prometheus"
)

// OtherClient is the client label of every id the clients file does not register now: the
// label's values are bounded by the file, whatever ids come.
const OtherClient = "other"

var reasons = []string{ReasonRate, ReasonConcurrency, ReasonStream}

// metrics is yardstick_client_throttled_total{client,reason} and the fallback counter. Each
// scrape creates, at 0, the throttled series of the clients registered then, so that rate() sees
// the first throttle and a dashboard needs no "or … * 0" (a client removed keeps its series).
type metrics struct {
	*prometheus.CounterVec
	fallbacks prometheus.CounterFunc
	l         *Limiter
}

func newMetrics(service string, l *Limiter) *metrics {
	labels := prometheus.Labels{"service": service}
	return &metrics{
		CounterVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "yardstick_client_throttled_total",
			Help:        "Calls refused 429 (reason rate or concurrency) and stream records slowed (reason stream) by a client's limits; client \"other\" for ids the clients file does not register.",
			ConstLabels: labels}, []string{"client", "reason"}),
		fallbacks: prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "yardstick_client_limit_fallbacks_total",
			Help:        "Rate decisions made in this replica's memory (rate/N) because Redis did not answer.",
			ConstLabels: labels}, func() float64 { return float64(l.Fallbacks()) }),
		l: l,
	}
}

// Register adds the limiter's series to reg.
func (l *Limiter) Register(reg prometheus.Registerer) error { return reg.Register(l.metrics) }

func (m *metrics) throttled(client, reason string) {
	if _, ok := m.l.cfg.Limits(client); !ok {
		client = OtherClient
	}
	m.WithLabelValues(client, reason).Inc()
}

func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	m.CounterVec.Describe(ch)
	m.fallbacks.Describe(ch)
}

func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range append(m.l.cfg.Clients(), OtherClient) {
		for _, r := range reasons {
			m.WithLabelValues(c, r) // at 0 if new
		}
	}
	m.CounterVec.Collect(ch)
	m.fallbacks.Collect(ch)
}
