package serve

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
)

// Reload re-reads every file now: a file that fails is logged and its last good version keeps
// serving; a change is logged once. Each outcome is counted in the reload series.
func (s *Server) Reload() {
	changed, err := s.issuer.Reload()
	if err != nil {
		s.log.Error("reload clients and keys: keeping the last good ones", "error", err)
		s.reloads.Failed(telemetry.SourceClients, err)
	} else {
		s.reloads.Succeeded(telemetry.SourceClients, s.issuer.Version(), time.Now())
	}
	if changed {
		s.log.Info("clients and keys reloaded", "loaded", s.issuer.Summary())
	}
	if s.svc.Reload == nil {
		return
	}
	if changed, err = s.svc.Reload(); err != nil {
		s.log.Error("reload content: keeping the last good bundle", "error", err)
		s.reloads.Failed(telemetry.SourceContent, err)
		return
	}
	if changed {
		s.log.Info("content bundle reloaded")
	}
	version := ""
	if s.svc.Version != nil {
		version = s.svc.Version()
	}
	s.reloads.Succeeded(telemetry.SourceContent, version, time.Now())
}

// registerOperatorSeries registers what an operator asks beside the request series: the login
// throttle's fallbacks, logins and keys (read at each scrape), the reloads and readiness.
func (s *Server) registerOperatorSeries() {
	reg, labels := s.telemetry.Registry(), prometheus.Labels{"service": s.cfg.Service}
	issuer := s.issuer
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "yardstick_login_throttle_fallbacks_total",
		Help: "Login throttle decisions made in this process's memory alone because Redis did not answer.", ConstLabels: labels},
		func() float64 { return float64(issuer.ThrottleFallbacks()) }))
	reg.MustRegister(telemetry.NewIssuerCollector(issuer, labels))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "yardstick_ready",
		Help: "1 while the service is ready for traffic (serving, not draining), else 0.", ConstLabels: labels},
		func() float64 {
			if s.ready.Load() {
				return 1
			}
			return 0
		}))
	s.reloads = telemetry.NewReloads(reg, labels)
	now := time.Now()
	s.reloads.Succeeded(telemetry.SourceClients, issuer.Version(), now) // New loaded both, or failed
	if s.svc.Version != nil {
		s.reloads.Succeeded(telemetry.SourceContent, s.svc.Version(), now)
	}
}
