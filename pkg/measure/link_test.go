package measure

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestLinkLinear(t *testing.T) {
	t.Parallel()
	l := &Link{ID: "L", Kind: LinkLinear, Slope: 2, Intercept: -100, Min: 100, Max: 800, LinkingError: 30}
	got, err := l.Measure(300, 20)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Normal{Mean: 500, SD: 50}); math.Abs(got.Mean-want.Mean) > 1e-12 || math.Abs(got.SD-want.SD) > 1e-12 {
		t.Errorf("Measure(300, 20) = %v; want %v (u = √((2·20)² + 30²))", got, want)
	}
	for _, score := range []float64{100, 800} {
		if _, err := l.Measure(score, 0); err != nil {
			t.Errorf("Measure(%v) at the range's edge: %v", score, err)
		}
	}
}

func TestLinkPoints(t *testing.T) {
	t.Parallel()
	l := &Link{ID: "P", Kind: LinkPoints, Min: 10, Max: 40, LinkingError: 0,
		Points: []LinkPoint{{10, 100}, {20, 300}, {40, 400}}}
	cases := []struct {
		score, mean, slope float64
	}{
		{10, 100, 20},             // first point: first segment's slope
		{15, 200, 20},             // inside
		{20, 300, (20 + 5) / 2.0}, // interior point: mean of both slopes
		{30, 350, 5},
		{40, 400, 5}, // last point
	}
	for _, c := range cases {
		got, err := l.Measure(c.score, 2)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Mean-c.mean) > 1e-12 || math.Abs(got.SD-2*c.slope) > 1e-12 {
			t.Errorf("Measure(%v, 2) = %v; want N(%v, %v)", c.score, got, c.mean, 2*c.slope)
		}
	}
}

func TestLinkErrors(t *testing.T) {
	t.Parallel()
	l := &Link{ID: "L", Kind: LinkLinear, Slope: 2, Intercept: 0, Min: 100, Max: 800}
	_, err := l.Measure(900, 10)
	var re *RangeError
	if !errors.As(err, &re) || re.Min != 100 || re.Max != 800 {
		t.Fatalf("Measure(900) error %v; want a *RangeError for [100, 800]", err)
	}
	if got, want := err.Error(), "scaleScore 900 is outside the link table's range [100, 800]"; got != want {
		t.Errorf("error %q; want %q", got, want)
	}
	if _, err := l.Measure(99.5, 10); !errors.As(err, &re) {
		t.Errorf("Measure(99.5) error %v; want a *RangeError", err)
	}
	for _, c := range []struct {
		score, sem float64
		want       string
	}{
		{math.NaN(), 1, "scaleScore"}, {math.Inf(1), 1, "scaleScore"}, {300, -1, "scaleSem"}, {300, math.NaN(), "scaleSem"},
	} {
		if _, err := l.Measure(c.score, c.sem); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Measure(%v, %v) error %v; want one naming %s", c.score, c.sem, err, c.want)
		}
	}
	odd := &Link{ID: "X", Kind: "cubic", Min: 0, Max: 1}
	if _, err := odd.Measure(0.5, 0); err == nil {
		t.Errorf("unknown kind: nil error")
	}
	short := &Link{ID: "S", Kind: LinkPoints, Min: 0, Max: 1, Points: []LinkPoint{{0, 0}}}
	if _, err := short.Measure(0.5, 0); err == nil {
		t.Errorf("one-point table: nil error")
	}
	gap := &Link{ID: "G", Kind: LinkPoints, Min: 0, Max: 10, Points: []LinkPoint{{2, 0}, {8, 6}}}
	for _, score := range []float64{1, 9} {
		if _, err := gap.Measure(score, 0); !errors.As(err, &re) {
			t.Errorf("score %v beyond the points of an inconsistent table: %v; want a *RangeError", score, err)
		}
	}
}

func TestDemoLinks(t *testing.T) {
	t.Parallel()
	b := Demo()
	l, _ := b.Link("STATE-READ-2026")
	got, err := l.Measure(500, 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2.8*500 - 780; got.Mean != want || math.Abs(got.SD-math.Hypot(28, 45)) > 1e-12 {
		t.Errorf("STATE-READ-2026 500±10 = %v; want N(%v, %v)", got, want, math.Hypot(28, 45))
	}
	pt, _ := b.Link("NATL-MATH-PT")
	if _, err := pt.Measure(pt.Max+1, 3); err == nil || !strings.Contains(err.Error(), "[100, 300]") {
		t.Errorf("NATL-MATH-PT above range: %v; want a range error naming [100, 300]", err)
	}
}
