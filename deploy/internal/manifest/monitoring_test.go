package manifest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// monitoringDir is the monitoring component seen from this package's directory.
var monitoringDir = filepath.Join(k8sDir, "components", "monitoring")

// alerts decodes the component's PrometheusRule and lists its alert names in order.
func alerts(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(monitoringDir, "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode([][]byte{doc})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.PrometheusRules) != 1 {
		t.Fatalf("prometheusrule.yaml holds %d PrometheusRules; want 1", len(s.PrometheusRules))
	}
	var names []string
	for _, g := range s.PrometheusRules[0].Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				names = append(names, r.Alert)
			}
		}
	}
	return names
}

// TestEveryAlertIsTestedFiringAndSilent wants promtool's unit tests (alerts.test.yaml, run by make
// check-alerts) to hold, for every alert, a case where it fires and one where it does not, and to
// name no alert the rules lack: a silent case for a misspelt name would pass vacuously.
func TestEveryAlertIsTestedFiringAndSilent(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(monitoringDir, "alerts.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		RuleFiles []string `json:"rule_files"`
		Tests     []struct {
			Name          string `json:"name"`
			AlertRuleTest []struct {
				AlertName string           `json:"alertname"`
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil { // promtool checks the file strictly
		t.Fatal(err)
	}
	fires, silent := map[string]int{}, map[string]int{}
	known := map[string]bool{}
	for _, a := range alerts(t) {
		known[a] = true
	}
	for _, tc := range file.Tests {
		for _, a := range tc.AlertRuleTest {
			if !known[a.AlertName] {
				t.Errorf("test %q: alert %q is not in prometheusrule.yaml", tc.Name, a.AlertName)
			}
			if len(a.ExpAlerts) > 0 {
				fires[a.AlertName]++
			} else {
				silent[a.AlertName]++
			}
		}
	}
	for a := range known {
		if fires[a] == 0 {
			t.Errorf("alert %s: no promtool test where it fires", a)
		}
		if silent[a] == 0 {
			t.Errorf("alert %s: no promtool test where it stays silent", a)
		}
	}
}

// TestEveryRunbookExists wants each alert's runbook_url (docs/operations.md#<alert, lower case>,
// which the policy holds it to) to name a heading of docs/operations.md, where the runbooks are.
// make check-links reads Markdown only, not the rule's annotations.
func TestEveryRunbookExists(t *testing.T) {
	t.Parallel()
	anchors := map[string]bool{}
	found := false
	for _, f := range []string{"operations.md"} {
		fh, err := os.Open(filepath.Join("..", "..", "..", "docs", f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		found = true
		sc := bufio.NewScanner(fh)
		fence := false
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "```") {
				fence = !fence
			}
			if h, ok := strings.CutPrefix(line, "#"); ok && !fence {
				anchors[slug(strings.TrimLeft(h, "#"))] = true
			}
		}
		fh.Close()
	}
	if !found {
		t.Fatal("docs/operations.md does not exist: the alerts' runbooks are missing")
	}
	for _, a := range alerts(t) {
		anchor := strings.TrimPrefix(RunbookURL(a), "docs/operations.md#")
		if !anchors[anchor] {
			t.Errorf("alert %s: runbook_url %s names no heading of docs/operations.md (want a heading %q)", a, RunbookURL(a), a)
		}
	}
}

// slug is GitHub's anchor for a heading of plain words (what scripts/checklinks checks links
// against): lower case, punctuation other than '-' and '_' dropped, spaces to '-'.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = regexp.MustCompile(`[^\p{L}\p{N}\- _]`).ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

// TestDashboardShipsAsTheImportableFile wants the dashboard ConfigMap that prod-monitoring renders
// to carry the Grafana sidecar's label and exactly dashboard.json, the file a person imports, and
// every query of that file to address the Prometheus data source variable and one service.
func TestDashboardShipsAsTheImportableFile(t *testing.T) {
	t.Parallel()
	file, err := os.ReadFile(filepath.Join(monitoringDir, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Render(filepath.Join(k8sDir, "overlays", "prod-monitoring"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(docs)
	if err != nil {
		t.Fatal(err)
	}
	var shipped []string
	for _, cm := range s.ConfigMaps {
		if cm.Labels["grafana_dashboard"] != "1" {
			continue
		}
		for k, v := range cm.Data {
			shipped = append(shipped, cm.Name+"/"+k)
			if v != string(file) {
				t.Errorf("ConfigMap %s: %s differs from dashboard.json", cm.Name, k)
			}
		}
	}
	if len(shipped) != 1 {
		t.Fatalf("prod-monitoring ships dashboards %v; want one ConfigMap key labelled grafana_dashboard=1", shipped)
	}
	var dash struct {
		UID    string          `json:"uid"`
		Panels []dashboardItem `json:"panels"`
	}
	if err := json.Unmarshal(file, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	n := 0
	var walk func([]dashboardItem)
	walk = func(ps []dashboardItem) {
		for _, p := range ps {
			walk(p.Panels)
			for _, tg := range p.Targets {
				n++
				if tg.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q, query %s: data source %q; want ${datasource}", p.Title, tg.RefID, tg.Datasource.UID)
				}
				if !strings.Contains(tg.Expr, `service="$service"`) {
					t.Errorf("panel %q, query %s: %s does not select service=\"$service\"", p.Title, tg.RefID, tg.Expr)
				}
			}
		}
	}
	walk(dash.Panels)
	if n == 0 || dash.UID == "" {
		t.Errorf("dashboard.json: uid %q, %d queries; want a uid and queries", dash.UID, n)
	}
}

type dashboardItem struct {
	Title   string          `json:"title"`
	Panels  []dashboardItem `json:"panels"`
	Targets []struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
}
