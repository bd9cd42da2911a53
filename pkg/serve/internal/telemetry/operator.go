package telemetry

import (
	"errors"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// Names follow Prometheus's conventions; the service is a constant label, never part of a name.

// LoginSource is what the issuer tells of its logins and keys (a *token.Issuer).
type LoginSource interface {
	LoginStats() token.LoginStats
	Keys() []token.KeyInfo
}

// issuerCollector reads the issuer's lock-free counts and its keys (changed on reload) per scrape.
type issuerCollector struct {
	src                              LoginSource
	logins, lockouts, keyInfo, keyBy *prometheus.Desc
}

// NewIssuerCollector exports the issuer's login outcomes, lockouts and signing keys.
func NewIssuerCollector(src LoginSource, labels prometheus.Labels) prometheus.Collector {
	return &issuerCollector{
		src: src,
		logins: prometheus.NewDesc("yardstick_logins_total",
			"Logins at /authToken and over gRPC by outcome: success, invalid_client, forbidden, throttled, busy.", []string{"outcome"}, labels),
		lockouts: prometheus.NewDesc("yardstick_login_lockouts_total",
			"Failed logins that locked their caller out (emptied a throttle bucket); with Redis, counted by one replica.", nil, labels),
		keyInfo: prometheus.NewDesc("yardstick_signing_key_info",
			"The key that signs new tokens (always 1).", []string{"kid"}, labels),
		keyBy: prometheus.NewDesc("yardstick_signing_key_expiry_timestamp_seconds",
			"When each key of the set should be replaced: the time in its kid plus YARDSTICK_KEY_LIFETIME.", []string{"kid"}, labels),
	}
}

func (c *issuerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.logins, c.lockouts, c.keyInfo, c.keyBy} {
		ch <- d
	}
}

func (c *issuerCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.LoginStats()
	for _, o := range []struct {
		outcome string
		n       uint64
	}{{"success", st.Success}, {"invalid_client", st.InvalidClient}, {"forbidden", st.Forbidden},
		{"throttled", st.Throttled}, {"busy", st.Busy}} {
		ch <- prometheus.MustNewConstMetric(c.logins, prometheus.CounterValue, float64(o.n), o.outcome)
	}
	ch <- prometheus.MustNewConstMetric(c.lockouts, prometheus.CounterValue, float64(st.Lockouts))
	for _, k := range c.src.Keys() {
		if k.Signing {
			ch <- prometheus.MustNewConstMetric(c.keyInfo, prometheus.GaugeValue, 1, k.Kid)
		}
		if !k.RotateBy.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.keyBy, prometheus.GaugeValue, float64(k.RotateBy.Unix()), k.Kid)
		}
	}
}

// Reload sources, the values of the source label.
const (
	SourceContent = "content" // the content bundle
	SourceClients = "clients" // the clients file and the signing keys
)

// Reloads records what each reload took or refused.
type Reloads struct {
	mu       sync.Mutex
	info     *prometheus.GaugeVec
	last     *prometheus.GaugeVec
	failures *prometheus.CounterVec
	version  map[string]string
}

// NewReloads registers the reload series on reg.
func NewReloads(reg prometheus.Registerer, labels prometheus.Labels) *Reloads {
	r := &Reloads{
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "yardstick_reload_info",
			Help: "The version (a hash of the files) loaded from each source: content or clients (always 1).", ConstLabels: labels},
			[]string{"source", "hash"}),
		last: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "yardstick_reload_last_success_timestamp_seconds",
			Help: "When each source was last read without a problem (loaded, or found unchanged).", ConstLabels: labels},
			[]string{"source"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "yardstick_reload_failures_total",
			Help: "Reloads refused by source and cause: missing, special_file, too_large, timeout, invalid.", ConstLabels: labels},
			[]string{"source", "cause"}),
		version: map[string]string{},
	}
	reg.MustRegister(r.info, r.last, r.failures)
	for _, s := range []string{SourceContent, SourceClients} {
		for _, c := range []string{"missing", "special_file", "too_large", "timeout", "invalid"} {
			r.failures.WithLabelValues(s, c) // present at 0 from the start, so rate() sees the first failure
		}
	}
	return r
}

// Succeeded records a read of source without a problem at a time; version names what is loaded.
func (r *Reloads) Succeeded(source, version string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.version[source]; ok && old != version {
		r.info.DeleteLabelValues(source, old)
	}
	r.version[source] = version
	r.info.WithLabelValues(source, version).Set(1)
	r.last.WithLabelValues(source).Set(float64(at.UnixNano()) / 1e9)
}

// Failed counts a reload of source refused with err.
func (r *Reloads) Failed(source string, err error) {
	r.failures.WithLabelValues(source, ReloadCause(err)).Inc()
}

// ReloadCause sorts a reload error into the cause label by the fixed phrases pkg/token and
// pkg/measure write for a file missing, not regular, too large or not read in time; else invalid.
func ReloadCause(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "missing"
	case strings.Contains(msg, ", not a regular file") || strings.Contains(msg, ", not a directory"):
		return "special_file"
	case strings.Contains(msg, "larger than"):
		return "too_large"
	case strings.Contains(msg, "is its mount hung?"):
		return "timeout"
	}
	return "invalid"
}
