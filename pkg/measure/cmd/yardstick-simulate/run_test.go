package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

func call(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	err = run(context.Background(), args, &o, &e)
	return o.String(), e.String(), err
}

func ptr[T any](v T) *T { return &v }

// line returns the value after label on its line of out.
func line(t *testing.T, out, label string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, label); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatalf("no %q line in:\n%s", label, out)
	return ""
}

// TestRunPrintsTheLibrarysFigures: the printed figures are bk.Simulate's for the same settings.
func TestRunPrintsTheLibrarysFigures(t *testing.T) {
	t.Parallel()
	bk, _ := measure.Demo().Bank("quantile")
	cases := []struct {
		name string
		args []string
		sim  measure.Simulation
		rule string
	}{
		{"information", []string{"-framework", "Quantile", "-target-uncertainty", "80", "-max-items", "60"},
			measure.Simulation{Settings: measure.AdaptiveRequest{Stop: measure.StopRules{TargetUncertainty: ptr(80.0), MaxItems: ptr(60)}}}, "maximum information"},
		{"random", []string{"-framework", "quantile", "-random", "-max-items", "12"},
			measure.Simulation{Random: true, Settings: measure.AdaptiveRequest{Stop: measure.StopRules{MaxItems: ptr(12)}}}, "random selection"},
		{"target, randomesque, strands, cut", []string{"-framework", "quantile", "-target-success", "0.75", "-randomesque", "4", "-seed", "9",
			"-strands", "Geometry=1, Algebraic Thinking=2", "-cut", "700", "-confidence", "0.9", "-min-items", "3", "-mean", "650", "-sd", "100"},
			measure.Simulation{Seed: 9, Population: measure.Normal{Mean: 650, SD: 100}, Settings: measure.AdaptiveRequest{
				TargetSuccess: ptr(0.75), Randomesque: ptr(4), Strands: map[string]float64{"Geometry": 1, "Algebraic Thinking": 2},
				Stop: measure.StopRules{Cut: ptr(700.0), Confidence: ptr(0.9), MinItems: ptr(3)}}}, "success rate nearest 0.75, randomesque 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"-students", "150"}, c.args...)
			out, errOut, err := call(t, args...)
			if err != nil {
				t.Fatalf("run: %v (%s)", err, errOut)
			}
			sim := c.sim
			sim.Students = 150
			if sim.Seed == 0 {
				sim.Seed = 1
			}
			if sim.Population == (measure.Normal{}) {
				sim.Population = measure.Normal{Mean: bk.Median(), SD: 300}
			}
			rep, err := bk.Simulate(context.Background(), sim, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, c.rule) || !strings.Contains(out, "through pkg/measure") {
				t.Errorf("head line of:\n%s\nwant %q", out, c.rule)
			}
			for _, w := range []struct{ label, want string }{
				{"mean length", fmt.Sprintf("%.2f items", rep.MeanLength)},
				{"RMSE", fmt.Sprintf("%.2f", rep.RMSE)},
				{"bias", fmt.Sprintf("%+.2f", rep.Bias)},
				{"95% coverage", fmt.Sprintf("%.4f", rep.Coverage)},
				{"max exposure", fmt.Sprintf("%.4f", rep.MaxExposure)},
				{"items used", fmt.Sprintf("%d of %d", len(rep.Exposure), bk.Len())},
			} {
				if got := line(t, out, w.label); got != w.want {
					t.Errorf("%s: got %q; want %q", w.label, got, w.want)
				}
			}
			if got := line(t, out, "mean uncertainty"); !strings.HasPrefix(got, fmt.Sprintf("%.2f (", rep.MeanSD)) {
				t.Errorf("mean uncertainty: got %q; want %.2f", got, rep.MeanSD)
			}
			if n := strings.Count(out, "\n                  "); n != 5 {
				t.Errorf("%d most-exposed lines; want 5 (the default)", n)
			}
		})
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-students", "0"}, "-students must be 1 or more"},
		{[]string{"-sd", "-1"}, "-sd must be 0 or more"},
		{[]string{"-exposure", "-1"}, "-exposure must be 0 or more"},
		{[]string{"-mean", "x"}, `"x" is not a number`},
		{[]string{"-randomesque", "1.5"}, `"1.5" is not a whole number`},
		{[]string{"-strands", "Vocabulary"}, `"Vocabulary" is not NAME=SHARE`},
		{[]string{"-strands", "Poetry=1"}, `unknown lexile strand "Poetry"`},
		{[]string{"-randomesque", "0", "-target-success", "1"}, "randomesque: must be 1 or more, got 0; targetSuccess"},
		{[]string{"-framework", "french"}, `no "french" items`},
		{[]string{"-url", "http://localhost:1", "-token", ""}, "-url needs -token"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-nope"}, "flag provided but not defined"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			_, _, err := call(t, c.args...)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v; want a usage error containing %q", err, c.want)
			}
		})
	}
	if _, _, err := call(t, "-bundle", t.TempDir()); err == nil || errors.Is(err, errUsage) {
		t.Errorf("empty bundle directory: %v; want a load error", err)
	}
	out, errOut, err := call(t, "-h")
	if err != nil || out != "" || !strings.Contains(errOut, "usage:") {
		t.Errorf("-h: %v, stdout %q, stderr %q; want the usage on stderr", err, out, errOut)
	}
}

// TestRunThroughService: with -url every step is a POST of the documented body with the bearer
// token, and the figures are the service's (here a stand-in that answers with the library and
// rounds as the wire does).
func TestRunThroughService(t *testing.T) {
	t.Parallel()
	bk, _ := measure.Demo().Bank("lexile")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/api/score/adaptive/next" || r.Header.Get("Authorization") != "Bearer T0K" || r.Method != http.MethodPost {
			http.Error(w, `{"message":"wrong call"}`, http.StatusBadRequest)
			return
		}
		var req wireRequest
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil || req.Framework != "lexile" || req.Stop == nil || *req.Stop.TargetUncertainty != 70 {
			http.Error(w, fmt.Sprintf(`{"message":"bad body %v %+v"}`, err, req), http.StatusBadRequest)
			return
		}
		lib := measure.AdaptiveRequest{Stop: measure.StopRules{TargetUncertainty: req.Stop.TargetUncertainty}}
		for _, it := range req.Items {
			lib.Items = append(lib.Items, measure.Response{ID: it.ID, Score: it.Result})
		}
		step, err := bk.Next(&lib)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer := map[string]any{"stopReason": step.StopReason, "ability": math.Round(step.Estimate.Ability),
			"uncertainty": math.Round(step.Estimate.Uncertainty), "itemsAnswered": step.Answered, "next": nil}
		if step.Next != nil {
			answer["next"] = map[string]string{"id": step.Next.ID, "strand": step.Next.Strand}
		}
		_ = json.NewEncoder(w).Encode(answer)
	}))
	defer srv.Close()
	out, errOut, err := call(t, "-students", "20", "-target-uncertainty", "70", "-url", srv.URL+"/", "-token", "T0K")
	if err != nil {
		t.Fatalf("run: %v (%s)", err, errOut)
	}
	rep, err := bk.Simulate(context.Background(), measure.Simulation{Students: 20, Seed: 1, Population: measure.Normal{Mean: bk.Median(), SD: 300},
		Settings: measure.AdaptiveRequest{Stop: measure.StopRules{TargetUncertainty: ptr(70.0)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := line(t, out, "mean length"), fmt.Sprintf("%.2f items", rep.MeanLength); got != want {
		t.Errorf("mean length through the service %q; want the library's %q", got, want)
	}
	if want := int32(math.Round(rep.MeanLength*20)) + 20; calls.Load() != want {
		t.Errorf("%d calls; want %d (one per item and one to stop, per student)", calls.Load(), want)
	}
	if !strings.Contains(out, "through "+srv.URL) {
		t.Errorf("head line does not name the service:\n%s", out)
	}
	// A refusal is an error naming the status.
	if _, _, err := call(t, "-students", "1", "-url", srv.URL, "-token", "wrong"); err == nil || !strings.Contains(err.Error(), "400 Bad Request") {
		t.Errorf("refused call: %v; want the status", err)
	}
}
