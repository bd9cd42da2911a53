package measure

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// bruteForceLoss is the check-loss minimum of a two-column design (1, x) found by trying every
// line through two observations: some optimum is such a vertex.
func bruteForceLoss(x, y []float64, tau float64) float64 {
	best := math.Inf(1)
	for a := range x {
		for b := a + 1; b < len(x); b++ {
			if x[a] == x[b] {
				continue
			}
			slope := (y[b] - y[a]) / (x[b] - x[a])
			icpt := y[a] - slope*x[a]
			s := 0.0
			for i := range x {
				s += check(y[i]-icpt-slope*x[i], tau)
			}
			best = min(best, s)
		}
	}
	return best
}

// TestQuantRegExact holds the descent's optimum to the brute-force one on small designs, with
// distinct data and with heavy ties (several students alike), at τ near both ends and the middle.
func TestQuantRegExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		grid float64 // measures rounded to this; 0 keeps them
	}{{"distinct", 0}, {"ties", 5}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(7, uint64(tc.grid)))
			const n = 40
			x, y := make([]float64, n), make([]float64, n)
			design := make([]float64, 2*n)
			for i := range x {
				x[i] = 10 + 10*rng.Float64()
				y[i] = 3*x[i] + 8*rng.NormFloat64()
				if tc.grid > 0 {
					x[i] = math.Round(x[i]/tc.grid) * tc.grid
					y[i] = math.Round(y[i]/tc.grid) * tc.grid
				}
				design[2*i], design[2*i+1] = 1, x[i]
			}
			taus := []float64{0.005, 0.1, 0.25, 0.5, 0.75, 0.9, 0.995}
			_, loss, err := newQuantReg(design, y, 2).fitTaus(taus, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, tau := range taus {
				want := bruteForceLoss(x, y, tau)
				if math.Abs(loss[k]-want) > 1e-9*want {
					t.Errorf("τ %v: loss got %.12g; want %.12g", tau, loss[k], want)
				}
			}
		})
	}
}

// TestQuantRegRankDeficient refuses a design whose columns are dependent on the data.
func TestQuantRegRankDeficient(t *testing.T) {
	t.Parallel()
	design := []float64{1, 2, 1, 2, 1, 2, 1, 2}
	_, _, err := newQuantReg(design, []float64{1, 2, 3, 4}, 2).fitTaus([]float64{0.5}, nil)
	if !errors.Is(err, errRankDeficient) {
		t.Errorf("got %v; want %v", err, errRankDeficient)
	}
}

func TestWeightedSelect(t *testing.T) {
	t.Parallel()
	c := []breakpoint{{t: 3, w: 1, i: 30}, {t: 1, w: 1, i: 10}, {t: 2, w: 2, i: 20}, {t: 2, w: 1, i: 21}, {t: 5, w: 4, i: 50}}
	for _, tc := range []struct {
		need float64
		want []int // any of these (tied t)
		ok   bool
	}{
		{0.5, []int{10}, true},
		{1, []int{10}, true},
		{1.5, []int{20, 21}, true},
		{4, []int{20, 21}, true},
		{4.5, []int{30}, true},
		{9, []int{50}, true},
		{9.5, nil, false},
	} {
		cc := append([]breakpoint(nil), c...)
		k, ok := weightedSelect(cc, tc.need)
		if ok != tc.ok {
			t.Errorf("need %v: ok got %v; want %v", tc.need, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		found := false
		for _, w := range tc.want {
			found = found || cc[k].i == w
		}
		if !found {
			t.Errorf("need %v: got observation %d; want one of %v", tc.need, cc[k].i, tc.want)
		}
	}
}
