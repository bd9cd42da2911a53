package yardstick

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// TestRoutes: known paths are bound to their rpcs, every path once; and the rules and the
// contract agree: each rule names a unary rpc of the contract, and each unary rpc of the
// contract's services has a rule (its JSON path). A new rpc with its rule needs nothing here.
func TestRoutes(t *testing.T) {
	t.Parallel()
	routes, err := Routes()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"/authToken": "/yardstick.auth.v1.TokenService/IssueToken",
		"/api/score/items/idsWithResults/bayes/strands": "/yardstick.scoring.v1.ScoringService/ScoreItemResultsBayesStrands",
		"/api/forecast/reading/group":                   "/yardstick.forecast.v1.ForecastService/ForecastReadingGroup",
		"/api/forecast/comprehension":                   "/yardstick.forecast.v1.ForecastService/ForecastComprehension",
		"/api/score/adaptive/next":                      "/yardstick.scoring.v1.ScoringService/NextItem",
		"/api/forecast/plan":                            "/yardstick.forecast.v1.ForecastService/Plan",
		"/api/forecast/growth":                          "/yardstick.forecast.v1.ForecastService/Growth",
		"/api/content/items":                            "/yardstick.scoring.v1.ContentService/ListItems",
		"/api/content/frameworks":                       "/yardstick.scoring.v1.ContentService/ListFrameworks",
	}
	got, ruled := map[string]string{}, map[string]bool{}
	for _, r := range routes {
		if r.Method != "POST" {
			t.Errorf("%s: method %s; want POST (the original API: every call is a POST)", r.Path, r.Method)
		}
		if _, twice := got[r.Path]; twice {
			t.Errorf("%s: bound twice; want once", r.Path)
		}
		got[r.Path], ruled[r.FullMethod] = r.FullMethod, true
		name := strings.ReplaceAll(strings.TrimPrefix(r.FullMethod, "/"), "/", ".")
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if md, ok := d.(protoreflect.MethodDescriptor); err != nil || !ok || md.IsStreamingClient() || md.IsStreamingServer() {
			t.Errorf("%s: rule for %s; want a unary rpc of the contract (%v)", r.Path, r.FullMethod, err)
		}
	}
	rpcs := 0
	protoregistry.GlobalFiles.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(f.Package()), "yardstick.") {
			return true
		}
		for i := range f.Services().Len() {
			sd := f.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				full := "/" + string(sd.FullName()) + "/" + string(md.Name())
				if !md.IsStreamingClient() && !md.IsStreamingServer() && !ruled[full] {
					t.Errorf("%s: a unary rpc without a rule in http.yaml", full)
				}
				rpcs++
			}
		}
		return true
	})
	if rpcs < len(routes) {
		t.Errorf("%d rpcs in the contract's services, fewer than its %d rules: are its packages registered?", rpcs, len(routes))
	}
	for path, method := range want {
		if got[path] != method {
			t.Errorf("%s: got %q; want %q", path, got[path], method)
		}
	}
}

func TestRecordField(t *testing.T) {
	t.Parallel()
	for rpc, want := range map[string]string{
		"ScoreItemIds":                 "score_item_ids",
		"ScoreItemResultsBayesStrands": "score_item_results_bayes_strands",
		"NextItem":                     "next_item",
		"Forecast":                     "forecast",
	} {
		if got := RecordField(rpc); got != want {
			t.Errorf("RecordField(%q): got %q; want %q", rpc, got, want)
		}
	}
}
