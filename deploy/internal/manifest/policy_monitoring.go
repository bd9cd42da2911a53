package manifest

import (
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MetricsPath is where the binaries serve Prometheus metrics, on the port named http.
const MetricsPath = "/metrics"

// checkPodMonitor wants the PodMonitor to scrape every Deployment of the overlay, on the port
// named http (where the binaries serve /metrics) and at MetricsPath, in its own namespace only.
// kube-score ignores the Prometheus Operator's kinds, and only the manifests and the binaries know
// which port serves the metrics.
func checkPodMonitor(p *problems, s *Set, m *monitoringv1.PodMonitor) {
	obj := "PodMonitor " + m.Name
	if m.Spec.NamespaceSelector.Any || len(m.Spec.NamespaceSelector.MatchNames) > 0 {
		p.add(obj, "namespaceSelector reaches beyond its own namespace")
	}
	selected := map[string]bool{}
	for _, d := range selectedDeployments(s, &m.Spec.Selector) {
		selected[d.Name] = true
	}
	for _, d := range s.Deployments {
		if !selected[d.Name] {
			p.add(obj, "does not select the pods of Deployment %s", d.Name)
		}
	}
	if len(m.Spec.PodMetricsEndpoints) == 0 {
		p.add(obj, "has no podMetricsEndpoints")
	}
	for i, ep := range m.Spec.PodMetricsEndpoints {
		if ep.Port == nil || *ep.Port != "http" {
			p.add(obj, "podMetricsEndpoints[%d] does not scrape the port named http, where the binaries serve %s", i, MetricsPath)
		} else {
			for _, d := range s.Deployments {
				for c := range d.Spec.Template.Spec.Containers {
					if _, err := ContainerPort(&d.Spec.Template.Spec.Containers[c], intstr.FromString(*ep.Port)); err != nil {
						p.add(obj, "podMetricsEndpoints[%d]: Deployment %s: %v", i, d.Name, err)
					}
				}
			}
		}
		if ep.Path != "" && ep.Path != MetricsPath {
			p.add(obj, "podMetricsEndpoints[%d] scrapes path %q; the binaries serve %s", i, ep.Path, MetricsPath)
		}
	}
}

// AlertAnnotations are the annotations every alert carries: what fired, what it means, and where
// its runbook is (docs/operations.md#<alert name, lower case>).
var AlertAnnotations = []string{"summary", "description", "runbook_url"}

// checkPrometheusRule wants every alert to carry a severity label and the AlertAnnotations, and
// its runbook_url to name the runbook of that alert. promtool (make check-alerts) checks the
// expressions and templates; kube-score does not read the kind.
func checkPrometheusRule(p *problems, r *monitoringv1.PrometheusRule) {
	obj := "PrometheusRule " + r.Name
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			if rule.Alert == "" {
				continue
			}
			where := "group " + g.Name + ", alert " + rule.Alert
			if rule.Labels["severity"] == "" {
				p.add(obj, "%s: no severity label", where)
			}
			for _, a := range AlertAnnotations {
				if strings.TrimSpace(rule.Annotations[a]) == "" {
					p.add(obj, "%s: no %s annotation", where, a)
				}
			}
			if u, want := rule.Annotations["runbook_url"], RunbookURL(rule.Alert); u != "" && u != want {
				p.add(obj, "%s: runbook_url is %q; want %q", where, u, want)
			}
		}
	}
}

// RunbookURL is the runbook of an alert: its heading (the alert's name) in docs/operations.md,
// as a path from the repository root, the public address of the docs not being known here.
func RunbookURL(alert string) string {
	return "docs/operations.md#" + strings.ToLower(alert)
}
