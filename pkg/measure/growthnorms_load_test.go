package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// handModel is a growth model with made-up coefficients: the quantile of τ_k is
// base + k + the prior's basis weighted by 1 … 7 (per prior).
func handModel(current Window, priors ...Window) *GrowthModel {
	m := &GrowthModel{Framework: "lexile", Current: current, Priors: priors, Lowest: 120.5, Highest: 1480.25}
	for range priors {
		m.Splines = append(m.Splines, Spline{Knots: [4]float64{600, 700.125, 800, 900}, Boundaries: [2]float64{300.5, 1200}})
	}
	for k := 1; k <= GrowthQuantiles; k++ {
		c := []float64{500 + 3*float64(k) + 0.1}
		for range priors {
			for j := 1; j <= SplineColumns; j++ {
				c = append(c, 100*float64(j)+1.0/3)
			}
		}
		m.Coefficients = append(m.Coefficients, c)
	}
	return m
}

var (
	g4EOY = Window{4, "EOY"}
	g5EOY = Window{5, "EOY"}
	g6EOY = Window{6, "EOY"}
)

func growthFS(models ...*GrowthModel) fstest.MapFS {
	m := demoFS()
	m["growth_norms.csv"] = &fstest.MapFile{Data: WriteGrowthNorms(models, "test norms")}
	return m
}

// TestGrowthNormsRoundTrip writes models and loads them back exactly, and picks the model §15
// says answers.
func TestGrowthNormsRoundTrip(t *testing.T) {
	t.Parallel()
	one := handModel(g6EOY, g5EOY)
	two := handModel(g6EOY, g4EOY, g5EOY)
	other := handModel(g5EOY, g4EOY)
	b, err := LoadFS(growthFS(two, one, other))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*GrowthModel{one, two, other} {
		got, ok := b.GrowthNorms("lexile", want.Current, want.Priors)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("model %s from %v: got %+v, %v; want %+v", want.Current, want.Priors, got, ok, want)
		}
	}
	for _, tc := range []struct {
		name    string
		current Window
		priors  []Window
		want    *GrowthModel
	}{
		{"two priors, two-prior model", g6EOY, []Window{g4EOY, g5EOY}, two},
		{"one prior", g6EOY, []Window{g5EOY}, one},
		{"two priors, only a one-prior model", g5EOY, []Window{{3, "EOY"}, g4EOY}, other},
		{"latest prior has no model", g6EOY, []Window{g5EOY, {5, "MOY"}}, nil},
		{"no model for the current window", Window{7, "EOY"}, []Window{g6EOY}, nil},
		{"no priors", g6EOY, nil, nil},
	} {
		got, ok := b.GrowthModelFor("lexile", tc.current, tc.priors)
		if ok != (tc.want != nil) || (ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%s: got %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
	if _, ok := Demo().GrowthNorms("quantile", g6EOY, []Window{g5EOY}); ok {
		// The demo's own norms are checked in their test; here only that frameworks do not mix.
		if _, ok := b.GrowthNorms("quantile", g6EOY, []Window{g4EOY}); ok {
			t.Error("quantile norms from lexile rows")
		}
	}
}

// TestGrowthNormsOptional loads a bundle without the file: no growth norms.
func TestGrowthNormsOptional(t *testing.T) {
	t.Parallel()
	m := demoFS()
	delete(m, "growth_norms.csv")
	b, err := LoadFS(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.GrowthModelFor("lexile", g6EOY, []Window{g5EOY}); ok {
		t.Error("a bundle without growth_norms.csv has growth norms")
	}
}

// TestGrowthNormsRejectsBadRows breaks one line of a good file at a time; each problem is
// reported at its file and line.
func TestGrowthNormsRejectsBadRows(t *testing.T) {
	t.Parallel()
	good := string(WriteGrowthNorms([]*GrowthModel{handModel(g6EOY, g4EOY, g5EOY)}, ""))
	lines := strings.Split(good, "\n")
	// Line 1 is the header; the two-prior model: knots 1 (2), boundaries 1 (3), knots 2 (4),
	// boundaries 2 (5), range (6), coefficients 1 … 100 (7 … 106).
	for _, tc := range []struct {
		name string
		line int
		text string // "" deletes the line
		want string // at that line unless it starts with "growth_norms.csv"
	}{
		{"unknown framework", 7, strings.Replace(lines[6], "lexile", "lexil", 1), `unknown framework "lexil"`},
		{"time of year", 7, strings.Replace(lines[6], ",EOY,", ",EOJ,", 1), `time_of_year "EOJ" is not BOY, MOY or EOY`},
		{"priors out of order", 7, strings.Replace(lines[6], "4:EOY;5:EOY", "5:EOY;4:EOY", 1), `priors "5:EOY;4:EOY": grade 5 EOY is not before grade 4 EOY; priors go older first`},
		{"prior after current", 7, strings.Replace(lines[6], "4:EOY;5:EOY", "4:EOY;7:EOY", 1), "prior grade 7 EOY is not before the current window grade 6 EOY"},
		{"three priors", 7, strings.Replace(lines[6], "4:EOY;5:EOY", "3:EOY;4:EOY;5:EOY", 1), `priors "3:EOY;4:EOY;5:EOY": 3 windows; want 1 or 2`},
		{"bad window", 7, strings.Replace(lines[6], "4:EOY;5:EOY", "4EOY;5:EOY", 1), `priors "4EOY;5:EOY": window "4EOY" is not grade:time_of_year`},
		{"unknown part", 7, strings.Replace(lines[6], "coefficients", "coefs", 1), `part "coefs" is not knots, boundaries, range or coefficients`},
		{"index 0", 7, strings.Replace(lines[6], "coefficients,1,", "coefficients,0,", 1), "coefficients index 0 is outside 1 … 100"},
		{"index 101", 7, strings.Replace(lines[6], "coefficients,1,", "coefficients,101,", 1), "coefficients index 101 is outside 1 … 100"},
		{"prior 3", 2, strings.Replace(lines[1], "knots,1,", "knots,3,", 1), "knots index 3 is outside 1 … 2"},
		{"duplicate", 8, strings.Replace(lines[7], "coefficients,2,", "coefficients,1,", 1), "duplicate coefficients 1 of this model (first at line 7)"},
		{"too few numbers", 7, lines[6][:strings.LastIndex(lines[6], ";")], "values has 14 numbers; want 15"},
		{"not a number", 6, strings.Replace(lines[5], "120.5", "12x", 1), `values: number 1 "12x" is not a finite number`},
		{"NaN", 6, strings.Replace(lines[5], "120.5", "NaN", 1), `values: number 1 "NaN" is not a finite number`},
		{"range reversed", 6, strings.Replace(lines[5], "120.5;1480.25", "1480.25;120.5", 1), "range [1480.25 120.5]: the lowest is above the highest"},
		{"range below -10000", 6, strings.Replace(lines[5], "120.5;1480.25", "-10000.5;1480.25", 1), "range [-10000.5 1480.25]: beyond the measures a request accepts (±10000)"},
		{"range above 10000", 6, strings.Replace(lines[5], "120.5;1480.25", "120.5;10000.5", 1), "range [120.5 10000.5]: beyond the measures a request accepts (±10000)"},
		{"knots decrease", 2, strings.Replace(lines[1], "600;", "750;", 1), "knots [750 700.125 800 900] do not increase"},
		{"boundaries equal", 3, strings.Replace(lines[2], "300.5;1200", "1200;1200", 1), "boundaries [1200 1200]: the lower is not below the upper"},
		{"knot outside", 3, strings.Replace(lines[2], "300.5;1200", "300.5;850", 1), "growth_norms.csv:2: growth model lexile grade 6 EOY from 4:EOY;5:EOY: prior 1's knots [600 700.125 800 900] are not inside its boundaries [300.5 850]"},
		{"missing coefficients", 50, "", "growth_norms.csv:2: growth model lexile grade 6 EOY from 4:EOY;5:EOY lacks coefficients 44"},
		{"missing range", 6, "", "growth_norms.csv:2: growth model lexile grade 6 EOY from 4:EOY;5:EOY lacks range 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := demoFS()
			m["growth_norms.csv"] = &fstest.MapFile{Data: []byte(good)}
			setLine(m, "growth_norms.csv", tc.line, tc.text)
			_, err := LoadFS(m)
			want := tc.want
			if !strings.HasPrefix(want, "growth_norms.csv") {
				want = fmt.Sprintf("growth_norms.csv:%d: %s", tc.line, tc.want)
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v; want an error containing %q", err, want)
			}
		})
	}
}

// TestGrowthNormsRangeAtTheBounds: a range of exactly ±10,000 (the measures a request accepts)
// loads; one beyond is refused (TestGrowthNormsRejectsBadRows).
func TestGrowthNormsRangeAtTheBounds(t *testing.T) {
	t.Parallel()
	good := string(WriteGrowthNorms([]*GrowthModel{handModel(g6EOY, g4EOY, g5EOY)}, ""))
	m := demoFS()
	m["growth_norms.csv"] = &fstest.MapFile{Data: []byte(strings.Replace(good, "120.5;1480.25", "-10000;10000", 1))}
	b, err := LoadFS(m)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := b.GrowthNorms("lexile", g6EOY, []Window{g4EOY, g5EOY})
	if !ok || got.Lowest != -10000 || got.Highest != 10000 {
		t.Errorf("got %v (%v); want a model with the range [-10000, 10000]", got, ok)
	}
}

// TestLiveReloadsGrowthNorms: new growth norms are served after a reload, and a broken file on
// a reload is reported with file:line while the last good norms stay.
func TestLiveReloadsGrowthNorms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, f := range demoFS() {
		if err := os.WriteFile(filepath.Join(dir, name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live, err := OpenLive(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "growth_norms.csv")
	model := handModel(Window{9, "EOY"}, Window{8, "EOY"})
	good := WriteGrowthNorms([]*GrowthModel{model}, "")
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := live.Reload(); err != nil || !changed {
		t.Fatalf("reload with new growth norms: changed %v, %v; want a change", changed, err)
	}
	if got, ok := live.Bundle().GrowthNorms("lexile", model.Current, model.Priors); !ok || !reflect.DeepEqual(got, model) {
		t.Fatalf("after the reload: got %v, %v; want the new model", got, ok)
	}
	broken := strings.Replace(string(good), "range,1,120.5", "range,1,x", 1)
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := live.Reload(); err == nil || changed || !strings.Contains(err.Error(), "growth_norms.csv:") {
		t.Fatalf("reload of a broken growth norms file: changed %v, %v; want a growth_norms.csv:line error", changed, err)
	}
	if _, ok := live.Bundle().GrowthNorms("lexile", model.Current, model.Priors); !ok {
		t.Error("a failed reload dropped the last good growth norms")
	}
}
