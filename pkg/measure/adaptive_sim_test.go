package measure

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestAdaptiveSimulation is §11's seeded simulation on the demo lexile bank's 2,000 dichotomous
// items (from BR400L to 1800L): simulated students with true abilities from N(bank median, P) answer with the
// model's probability until the posterior SD is at most 60 (maxItems raised to 400 so that the
// random reference is not cut short). Maximum information must need at least 40% fewer items on
// average than random selection; the mean reported SD must lie within 10% of the empirical RMSE;
// 95% intervals must cover the true ability 93–97% of the time; randomesque 5 must lower the
// largest exposure rate against randomesque 1. It takes about 35 s of CPU (6,000 simulated
// sessions), several minutes under the race detector: make test gives the race run 30 minutes.
func TestAdaptiveSimulation(t *testing.T) {
	t.Parallel()
	bk, ok := Demo().Bank("lexile")
	if !ok {
		t.Fatal("demo bundle has no lexile bank")
	}
	pop := Normal{Mean: bk.Median(), SD: bk.Framework().PopulationSD}
	target, maxItems := 60.0, 400
	// The dichotomous items only, in the bank's order (the random reference draws from the pool
	// in its order): the bank of §11's study; TestAdaptivePolytomousFewerItems adds partial credit.
	var dichotomous []string
	for _, it := range bk.all {
		if !it.Polytomous() {
			dichotomous = append(dichotomous, it.ID)
		}
	}
	settings := AdaptiveRequest{Pool: dichotomous, Stop: StopRules{TargetUncertainty: &target, MaxItems: &maxItems}}
	run := func(name string, sim Simulation) SimulationReport {
		t.Helper()
		sim.Students, sim.Seed, sim.Population = 2000, 2026, pop
		rep, err := bk.Simulate(context.Background(), sim, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%-14s length %.1f, RMSE %.1f, mean SD %.1f, bias %+.1f, coverage %.3f, max exposure %.3f, stops %v",
			name, rep.MeanLength, rep.RMSE, rep.MeanSD, rep.Bias, rep.Coverage, rep.MaxExposure, rep.StopReasons)
		return rep
	}
	mfi := run("information", Simulation{Settings: settings})
	random := run("random", Simulation{Settings: settings, Random: true})
	k5 := settings
	five := 5
	k5.Randomesque = &five
	rq5 := run("randomesque 5", Simulation{Settings: k5})

	if got, limit := mfi.MeanLength, 0.6*random.MeanLength; got > limit {
		t.Errorf("maximum information took %.1f items on average; want at most %.1f (40%% fewer than random selection's %.1f)", got, limit, random.MeanLength)
	}
	for _, r := range []struct {
		name string
		rep  SimulationReport
	}{{"information", mfi}, {"random", random}, {"randomesque 5", rq5}} {
		if r.rep.StopReasons[StopTargetUncertainty] != r.rep.Students {
			t.Errorf("%s: stops %v; want every session stopped by targetUncertainty", r.name, r.rep.StopReasons)
		}
		if ratio := r.rep.MeanSD / r.rep.RMSE; ratio < 0.9 || ratio > 1.1 {
			t.Errorf("%s: mean reported SD %.1f is %.3f of the RMSE %.1f; want 0.9-1.1", r.name, r.rep.MeanSD, ratio, r.rep.RMSE)
		}
		if c := r.rep.Coverage; c < 0.93 || c > 0.97 {
			t.Errorf("%s: 95%% intervals cover %.3f; want 0.93-0.97", r.name, c)
		}
	}
	if rq5.MaxExposure >= mfi.MaxExposure {
		t.Errorf("randomesque 5: largest exposure rate %.3f; want below randomesque 1's %.3f", rq5.MaxExposure, mfi.MaxExposure)
	}
}

// TestSimulateSmall: a pool smaller than the sessions' length is used up under both rules, the
// report counts what happened, and bad settings or a broken NextFunc are errors.
func TestSimulateSmall(t *testing.T) {
	t.Parallel()
	bk := demoBank(t, "lexile")
	pool := []string{"L000001", "L000002", "L000003", "L000004", "L000005", "L000005"}
	settings := AdaptiveRequest{Pool: pool, Exclude: []string{"L000005"}}
	for _, random := range []bool{false, true} {
		rep, err := bk.Simulate(context.Background(), Simulation{Students: 50, Seed: 1, Population: Normal{Mean: 600, SD: 200}, Settings: settings, Random: random}, nil)
		if err != nil {
			t.Fatalf("random %v: %v", random, err)
		}
		if rep.MeanLength != 4 || rep.StopReasons[StopPoolExhausted] != 50 || rep.MaxExposure != 1 || len(rep.Exposure) != 4 {
			t.Errorf("random %v: %+v; want every student to take the 4 items of the pool and stop with poolExhausted", random, rep)
		}
	}
	pop := Normal{Mean: 600, SD: 200}
	bad := []struct {
		name string
		sim  Simulation
		next NextFunc
		want string
	}{
		{"no students", Simulation{Population: pop}, nil, "at least one student"},
		{"population", Simulation{Students: 1, Population: Normal{Mean: math.NaN(), SD: 1}}, nil, "population"},
		{"invalid settings", Simulation{Students: 1, Population: pop, Settings: AdaptiveRequest{Randomesque: ptr(0)}}, nil, "randomesque"},
		{"no item, no reason", Simulation{Students: 1, Population: pop}, func(context.Context, *AdaptiveRequest) (Step, error) { return Step{}, nil }, "neither"},
		{"an item twice", Simulation{Students: 1, Population: pop}, func(context.Context, *AdaptiveRequest) (Step, error) {
			return Step{Next: &Item{ID: "L000001", Difficulty: 1}}, nil
		}, "twice"},
	}
	for _, c := range bad {
		if _, err := bk.Simulate(context.Background(), c.sim, c.next); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", c.name, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := bk.Simulate(ctx, Simulation{Students: 1, Population: pop}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v; want context.Canceled", err)
	}
}
