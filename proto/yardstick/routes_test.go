package yardstick

import "testing"

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
	got := map[string]string{}
	for _, r := range routes {
		if r.Method != "POST" {
			t.Errorf("%s: method %s; want POST (the original API: every call is a POST)", r.Path, r.Method)
		}
		got[r.Path] = r.FullMethod
	}
	if len(routes) != 24 {
		t.Errorf("got %d routes; want 24 (1 token, 11 scoring, 5 content, 7 forecast)", len(routes))
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
