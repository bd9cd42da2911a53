package quota

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// OtherClient is the client label of every id the clients file does not register now: the
// label's values are bounded by the file, whatever ids come.
const OtherClient = "other"

var reasons = []string{ReasonRate, ReasonConcurrency, ReasonStream}

// metrics is yardstick_client_throttled_total{client,reason} and the fallback counter. The
// throttled series of every registered client and reason are exported from the start, at 0,
// so that rate() sees the first throttle and a dashboard needs no "or … * 0"; a client added by
// a reload appears at the next scrape.
type metrics struct {
	l         *Limiter
	desc      *prometheus.Desc
	fallbacks *prometheus.Desc

	mu     sync.Mutex
	counts map[[2]string]*atomic.Uint64 // by client label and reason
}

func newMetrics(service string, l *Limiter) *metrics {
	labels := prometheus.Labels{"service": service}
	return &metrics{
		l: l,
		desc: prometheus.NewDesc("yardstick_client_throttled_total",
			"Calls refused 429 (reason rate or concurrency) and stream records slowed (reason stream) by a client's limits; client \"other\" for ids the clients file does not register.",
			[]string{"client", "reason"}, labels),
		fallbacks: prometheus.NewDesc("yardstick_client_limit_fallbacks_total",
			"Rate decisions made in this replica's memory (rate/N) because Redis did not answer.", nil, labels),
		counts: map[[2]string]*atomic.Uint64{},
	}
}

// Register adds the limiter's series to reg.
func (l *Limiter) Register(reg prometheus.Registerer) error { return reg.Register(l.metrics) }

func (m *metrics) throttled(client, reason string) {
	if _, ok := m.l.cfg.Limits(client); !ok {
		client = OtherClient
	}
	k := [2]string{client, reason}
	m.mu.Lock()
	c := m.counts[k]
	if c == nil {
		c = new(atomic.Uint64)
		m.counts[k] = c
	}
	m.mu.Unlock()
	c.Add(1)
}

// Throttled is the count of the client's label and reason (for tests and the soak).
func (l *Limiter) Throttled(client, reason string) uint64 {
	l.metrics.mu.Lock()
	defer l.metrics.mu.Unlock()
	if c := l.metrics.counts[[2]string{client, reason}]; c != nil {
		return c.Load()
	}
	return 0
}

func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.desc
	ch <- m.fallbacks
}

func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	clients := append(m.l.cfg.Clients(), OtherClient)
	m.mu.Lock()
	values := make(map[[2]string]uint64, len(m.counts))
	for k, c := range m.counts {
		values[k] = c.Load()
		if !slices.Contains(clients, k[0]) {
			clients = append(clients, k[0]) // a client removed since it was throttled keeps its count
		}
	}
	m.mu.Unlock()
	slices.Sort(clients)
	for _, c := range clients {
		for _, r := range reasons {
			ch <- prometheus.MustNewConstMetric(m.desc, prometheus.CounterValue, float64(values[[2]string{c, r}]), c, r)
		}
	}
	ch <- prometheus.MustNewConstMetric(m.fallbacks, prometheus.CounterValue, float64(m.l.Fallbacks()))
}
