package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"
)

// manySteps is one item of n steps, the first at lo and the others at hi: the costliest request
// the difficulties path accepts (the limit on steps is the limit on items, 5,000).
func manySteps(n int, lo, hi float64) []Difficulty {
	steps := make([]float64, n)
	steps[0] = lo
	for i := 1; i < n; i++ {
		steps[i] = hi
	}
	return []Difficulty{{Steps: steps, Count: 1}}
}

// refStepsLogLik is log P(X = r | θ) of one partial credit item written the plain way, with runs
// of equal steps summed as the geometric series they are (so 5,000 steps in two runs cost two
// terms): category h has log-weight Σ_{k≤h} z_k, z_k = (θ − d_k)/s + λ.
func refStepsLogLik(steps []float64, r int, theta, s, lambda float64) float64 {
	return refRunsLogLik(runsOf(steps), r, theta, s, lambda)
}

// run is a run of equal steps.
type run struct {
	d float64
	n int
}

func runsOf(steps []float64) []run {
	var runs []run
	for i, d := range steps {
		if i == 0 || d != steps[i-1] {
			runs = append(runs, run{d: d})
		}
		runs[len(runs)-1].n++
	}
	return runs
}

func refRunsLogLik(runs []run, r int, theta, s, lambda float64) float64 {
	var logs []float64 // one log-sum per run of equal steps, and category 0
	logs = append(logs, 0)
	c, at := 0.0, 0.0 // the log-weight before the run; that of category r
	i := 0
	for _, ru := range runs {
		j := i + ru.n
		z, n := (theta-ru.d)/s+lambda, float64(ru.n)
		// log Σ_{m=1..n} e^(c + m·z)
		var g float64
		switch {
		case z > 0: // the largest term e^(c+n·z) times Σ_{m<n} e^(−m·z)
			g = c + n*z + math.Log(-math.Expm1(-n*z)) - math.Log(-math.Expm1(-z))
		case z < 0: // the largest term e^(c+z) times Σ_{m<n} e^(m·z)
			g = c + z + math.Log(-math.Expm1(n*z)) - math.Log(-math.Expm1(z))
		default:
			g = c + math.Log(n)
		}
		logs = append(logs, g)
		if r > i && r <= j {
			at = c + float64(r-i)*z
		}
		c += n * z
		i = j
	}
	top := math.Inf(-1)
	for _, l := range logs {
		top = math.Max(top, l)
	}
	sum := 0.0
	for _, l := range logs {
		sum += math.Exp(l - top)
	}
	return at - top - math.Log(sum)
}

// refStepsPosterior integrates the posterior of one such item by Simpson's rule, in measure
// units: panels of 1e-3 logit from 200 logits below the prior mean and the steps (40 prior SDs
// if that is further) to as far above,
// and of 2e-6 logit within half a logit of each distinct step, where the item's probabilities
// turn fastest.
func refStepsPosterior(f *Framework, steps []float64, r int, prior Normal) Normal {
	s := f.UnitsPerLogit
	lambda := math.Log(f.SuccessAtMatch / (1 - f.SuccessAtMatch))
	runs := runsOf(steps)
	logPost := func(x float64) float64 {
		u := (x - prior.Mean) / prior.SD
		return refRunsLogLik(runs, r, x, s, lambda) - 0.5*u*u
	}
	lo, hi := prior.Mean, prior.Mean
	var fine [][2]float64
	for i, d := range steps {
		lo, hi = math.Min(lo, d), math.Max(hi, d)
		if i == 0 || d != steps[i-1] {
			fine = append(fine, [2]float64{d - lambda*s - s/2, d - lambda*s + s/2})
		}
	}
	lo, hi = math.Min(lo-200*s, prior.Mean-40*prior.SD), math.Max(hi+200*s, prior.Mean+40*prior.SD)
	cuts := []float64{lo, hi}
	for _, w := range fine {
		cuts = append(cuts, w[0], w[1])
	}
	slices.Sort(cuts)
	inFine := func(x float64) bool {
		for _, w := range fine {
			if x > w[0] && x < w[1] {
				return true
			}
		}
		return false
	}
	// Two passes: the largest log-posterior on the nodes, then the moments relative to it.
	top := math.Inf(-1)
	var m0, m1, m2 float64
	for pass := 0; pass < 2; pass++ {
		for i := 0; i+1 < len(cuts); i++ {
			a, b := cuts[i], cuts[i+1]
			if b <= a {
				continue
			}
			h := 1e-3 * s
			if inFine(a + (b-a)/2) {
				h = 2e-6 * s
			}
			n := 2 * int(math.Ceil((b-a)/(2*h)))
			h = (b - a) / float64(n)
			for j := 0; j <= n; j++ {
				x := a + float64(j)*h
				v := logPost(x)
				if pass == 0 {
					top = math.Max(top, v)
					continue
				}
				w := 2.0
				switch {
				case j == 0 || j == n:
					w = 1
				case j%2 == 1:
					w = 4
				}
				p := w * h / 3 * math.Exp(v-top)
				dx := x - prior.Mean
				m0 += p
				m1 += p * dx
				m2 += p * dx * dx
			}
		}
	}
	mean := m1 / m0
	return Normal{Mean: prior.Mean + mean, SD: math.Sqrt(m2/m0 - mean*mean)}
}

// countingContext counts the calls of Err and is cancelled from call after+1 on: how often the
// estimate looked at it, and so how many evaluations it made, without a clock.
type countingContext struct {
	context.Context
	after int64
	calls atomic.Int64
}

func (c *countingContext) Err() error {
	if c.calls.Add(1) > c.after {
		return context.Canceled
	}
	return nil
}

func never() *countingContext {
	return &countingContext{Context: context.Background(), after: math.MaxInt64}
}

// TestBayesManySteps: one item of 5,000 steps at ±10,000 (the request that cost 10 s of CPU)
// and its neighbours answer what a slow exact integration does, within 1e-6 logits, while the
// fallback stays within its budget of evaluations (399 at 5,001 categories; it made 131,072).
func TestBayesManySteps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fw    string
		steps []Difficulty
		r     int
		prior Normal
	}{
		{"lexile", manySteps(5000, -10000, 10000), 1, Normal{0, 10000}},
		{"quantile", manySteps(5000, -10000, 10000), 1, Normal{0, 10000}},
		{"lexile", manySteps(5000, -10000, 10000), 0, Normal{0, 10000}},
		{"lexile", manySteps(5000, -10000, 10000), 2, Normal{-3000, 300}},
		{"lexile", manySteps(5000, 10000, -10000), 4999, Normal{0, 10000}},
		{"lexile", manySteps(2000, -5000, 5000), 1, Normal{500, 1000}},
	}
	for _, c := range cases {
		n := len(c.steps[0].Steps)
		t.Run(fmt.Sprintf("%s/%d_steps_%v_%v/r=%d/prior=%v±%v", c.fw, n, c.steps[0].Steps[0], c.steps[0].Steps[1], c.r, c.prior.Mean, c.prior.SD), func(t *testing.T) {
			t.Parallel()
			f := testFramework(t, c.fw)
			ctx := never()
			got, err := f.BayesContext(ctx, Test{Items: c.steps, Correct: c.r}, c.prior)
			if err != nil {
				t.Fatal(err)
			}
			want := refStepsPosterior(f, c.steps[0].Steps, c.r, c.prior)
			s := f.UnitsPerLogit
			t.Logf("mean %.2g, SD %.2g logits from the reference", math.Abs(got.Ability-want.Mean)/s, math.Abs(got.Uncertainty-want.SD)/s)
			if d := math.Abs(got.Ability-want.Mean) / s; !(d <= 1e-6) {
				t.Errorf("posterior mean %v; want %v (reference), %.2g logits apart", got.Ability, want.Mean, d)
			}
			if d := math.Abs(got.Uncertainty-want.SD) / s; !(d <= 1e-6) {
				t.Errorf("posterior SD %v; want %v (reference), %.2g logits apart", got.Uncertainty, want.SD, d)
			}
			budget := (denseWork / (n + 1))
			if looks := ctx.calls.Load(); looks*cancelEvery > int64(budget) {
				t.Errorf("the fallback looked at its context %d times (%d evaluations); want at most %d evaluations", looks, looks*cancelEvery, budget)
			}
		})
	}
}

// TestDenseBudget pins the fallback's evaluations by the test's size: all of the trapezoid's
// rounds on small tests, about 400 on the largest, never fewer than 256.
func TestDenseBudget(t *testing.T) {
	t.Parallel()
	cases := []struct {
		size, want int
	}{
		{1, 1 << 19}, {3, 1 << 19}, {4, 500000}, {40, 50000}, {5001, 399}, {7812, 256}, {7813, 256}, {1 << 20, 256},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.size), func(t *testing.T) {
			t.Parallel()
			it := items{k: make([]float64, c.size)}
			if got := it.denseBudget(); got != c.want {
				t.Errorf("denseBudget at size %d = %d; want %d", c.size, got, c.want)
			}
		})
	}
}

// TestBayesCancelled: an estimate whose caller has gone stops within cancelEvery·4 evaluations of
// the first look that sees it (at 5,000 steps 64 evaluations, about 5 ms of CPU), and says why.
func TestBayesCancelled(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	tt := Test{Items: manySteps(5000, -10000, 10000), Correct: 1}
	for _, after := range []int64{0, 3, 10, 20} {
		t.Run(fmt.Sprint(after), func(t *testing.T) {
			t.Parallel()
			ctx := &countingContext{Context: context.Background(), after: after}
			got, err := f.BayesContext(ctx, tt, Normal{0, 10000})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("BayesContext = %v, %v; want context.Canceled", got, err)
			}
			if extra := ctx.calls.Load() - (after + 1); extra > 4 {
				t.Errorf("%d looks after the cancellation was seen (%d evaluations); want at most 4", extra, extra*cancelEvery)
			}
		})
	}
}
