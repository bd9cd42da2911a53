package measure

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// pcmRef is the partial credit model written the plain way, independently of pcm.go: the
// category log-weights Σ_{k≤h} z_k in measure units, normalised by a log-sum-exp, the moments
// from the normalised probabilities.
type pcmRef struct {
	lambda, s float64
}

func newPCMRef(f *Framework) pcmRef {
	return pcmRef{lambda: math.Log(f.SuccessAtMatch / (1 - f.SuccessAtMatch)), s: f.UnitsPerLogit}
}

// blockSteps is a block's steps, one step for a dichotomous block.
func blockSteps(d Difficulty) []float64 {
	if len(d.Steps) > 0 {
		return d.Steps
	}
	return []float64{d.Measure}
}

// moments returns E, V and C of one item's score at theta (measure units), and its log
// normaliser (the log of Σ_h exp(Σ_{k≤h} z_k)).
func (m pcmRef) moments(theta float64, steps []float64) (e, v, c, logNorm float64) {
	logs := make([]float64, len(steps)+1)
	for k, d := range steps {
		logs[k+1] = logs[k] + (theta-d)/m.s + m.lambda
	}
	top := slices.Max(logs)
	sum := 0.0
	for _, l := range logs {
		sum += math.Exp(l - top)
	}
	logNorm = top + math.Log(sum)
	probs := make([]float64, len(logs))
	for h, l := range logs {
		probs[h] = math.Exp(l - logNorm)
		e += float64(h) * probs[h]
	}
	for h, q := range probs {
		d := float64(h) - e
		v += d * d * q
		c += d * d * d * d * q
	}
	return e, v, c, logNorm
}

// score returns Σ Count·E and Σ Count·V over the test at theta.
func (m pcmRef) score(items []Difficulty, theta float64) (e, v float64) {
	for _, d := range items {
		ei, vi, _, _ := m.moments(theta, blockSteps(d))
		e += float64(d.Count) * ei
		v += float64(d.Count) * vi
	}
	return e, v
}

// mle solves Σ E(θ) = r by bisection to 1e-10 logits.
func (m pcmRef) mle(items []Difficulty, r float64) float64 {
	lo, hi := -1e5, 1e5
	for hi-lo > 1e-10*m.s {
		mid := 0.5 * (lo + hi)
		if e, _ := m.score(items, mid); e < r {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi)
}

// logLik is the log-likelihood of raw score r (up to a constant: r is sufficient).
func (m pcmRef) logLik(items []Difficulty, r, theta float64) float64 {
	l := r * theta / m.s
	for _, d := range items {
		_, _, _, ln := m.moments(theta, blockSteps(d))
		l -= float64(d.Count) * ln
	}
	return l
}

// posterior is the posterior mean and SD by the trapezoid rule with 6,000 steps over the
// interval where the log-posterior is within 40 of its top (found on a coarse grid first).
func (m pcmRef) posterior(items []Difficulty, r float64, prior Normal) Normal {
	lp := func(x float64) float64 {
		d := (x - prior.Mean) / prior.SD
		return m.logLik(items, r, x) - 0.5*d*d
	}
	lo, hi := prior.Mean-12*prior.SD-20*m.s, prior.Mean+12*prior.SD+20*m.s
	const coarse = 4000
	top, vals := math.Inf(-1), make([]float64, coarse+1)
	for i := range vals {
		vals[i] = lp(lo + (hi-lo)*float64(i)/coarse)
		top = math.Max(top, vals[i])
	}
	first, last := 0, coarse
	for first < coarse && vals[first+1] < top-40 {
		first++
	}
	for last > 0 && vals[last-1] < top-40 {
		last--
	}
	a, b := lo+(hi-lo)*float64(first)/coarse, lo+(hi-lo)*float64(last)/coarse
	const points = 6000
	var m0, m1, m2 float64
	step := (b - a) / points
	centre := 0.5 * (a + b)
	for i := 0; i <= points; i++ {
		x := a + float64(i)*step
		w := math.Exp(lp(x) - top)
		if i == 0 || i == points {
			w *= 0.5
		}
		m0 += w
		m1 += w * (x - centre)
		m2 += w * (x - centre) * (x - centre)
	}
	mean := m1 / m0
	return Normal{Mean: centre + mean, SD: math.Sqrt(m2/m0 - mean*mean)}
}

// pcmTests are the tests the estimator checks run on: pure partial credit, mixed with
// dichotomous items, disordered and far-apart steps, counts, one-step blocks.
func pcmTests() []struct {
	name  string
	items []Difficulty
} {
	return []struct {
		name  string
		items []Difficulty
	}{
		{"one 0-2 item", []Difficulty{{Count: 1, Steps: []float64{400, 600}}}},
		{"one 0-3 item, disordered", []Difficulty{{Count: 1, Steps: []float64{700, 400, 550}}}},
		{"ten 0-3 items", func() []Difficulty {
			var d []Difficulty
			for i := 0; i < 10; i++ {
				c := 200 + 60*float64(i)
				d = append(d, Difficulty{Count: 1, Steps: []float64{c - 150, c, c + 150}})
			}
			return d
		}()},
		{"mixed 0/1, 0-2, 0-3", []Difficulty{
			{Measure: 300, Count: 1}, {Measure: 520, Count: 1}, {Measure: 800, Count: 1},
			{Count: 1, Steps: []float64{350, 650}}, {Count: 1, Steps: []float64{500, 480, 900}},
			{Measure: 640, Count: 3}, {Count: 2, Steps: []float64{100, 1200}}, {Count: 1, Steps: []float64{610}},
		}},
		{"steps 10 logits apart", []Difficulty{{Count: 1, Steps: []float64{-1300, 500, 2300}}, {Measure: 500, Count: 1}}},
		{"disordered 0-4", []Difficulty{{Count: 1, Steps: []float64{900, 300, 800, 200}}, {Count: 1, Steps: []float64{400, 500}}}},
		{"0-16 among 0-2 and 0-3", func() []Difficulty { // more steps than the multiplicative sums take
			d := []Difficulty{{Count: 2, Steps: []float64{400, 600}}, {Count: 1, Steps: []float64{500, 450, 700}}}
			var long []float64
			for k := 0; k < 16; k++ {
				long = append(long, 200+50*float64(k))
			}
			return append(d, Difficulty{Count: 1, Steps: long}, Difficulty{Count: 1, Steps: []float64{300, 650}})
		}()},
	}
}

func maxScore(items []Difficulty) int { return Test{Items: items}.MaxScore() }

// TestPCMStandardMatchesReference: for every raw score 0 … M of each test, the MLE is within
// 1e-6 logits of the reference root (bisection to 1e-10 on the big-float model), with §2's
// adjustment at 0 and M (Σ E = 0.3 and M − 0.3), and the uncertainty is s/√ΣV there.
func TestPCMStandardMatchesReference(t *testing.T) {
	t.Parallel()
	for _, fw := range []string{"lexile", "quantile"} {
		f := testFramework(t, fw)
		ref := newPCMRef(f)
		for _, tc := range pcmTests() {
			t.Run(fw+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				M := maxScore(tc.items)
				prev := math.Inf(-1)
				for r := 0; r <= M; r++ {
					got, err := f.Standard(Test{Items: tc.items, Correct: r})
					if err != nil {
						t.Fatalf("r=%d: %v", r, err)
					}
					target := float64(r)
					switch r {
					case 0:
						target = 0.3
					case M:
						target = float64(M) - 0.3
					}
					want := ref.mle(tc.items, target)
					if math.Abs(got.Ability-want) > 1e-6*f.UnitsPerLogit {
						t.Errorf("r=%d: ability got %.10f; want %.10f", r, got.Ability, want)
					}
					_, v := ref.score(tc.items, want)
					if wantU := f.UnitsPerLogit / math.Sqrt(v); math.Abs(got.Uncertainty-wantU) > 1e-6*wantU {
						t.Errorf("r=%d: uncertainty got %.10f; want %.10f", r, got.Uncertainty, wantU)
					}
					if !(got.Ability > prev) {
						t.Errorf("r=%d: ability %v is not above r-1's %v", r, got.Ability, prev)
					}
					prev = got.Ability
				}
			})
		}
	}
}

// TestPCMBayesMatchesReference: the EAP and posterior SD are within 1e-6 logits of the dense
// reference integration for every raw score of each test under priors near and far.
func TestPCMBayesMatchesReference(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	ref := newPCMRef(f)
	priors := []Normal{{Mean: 500, SD: 300}, {Mean: 1500, SD: 50}, {Mean: -200, SD: 1000}}
	for _, tc := range pcmTests() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			M := maxScore(tc.items)
			for r := 0; r <= M; r++ {
				for _, prior := range priors {
					got, err := f.Bayes(Test{Items: tc.items, Correct: r}, prior)
					if err != nil {
						t.Fatalf("r=%d prior %v: %v", r, prior, err)
					}
					want := ref.posterior(tc.items, float64(r), prior)
					if math.Abs(got.Ability-want.Mean) > 1e-6*f.UnitsPerLogit || math.Abs(got.Uncertainty-want.SD) > 1e-6*f.UnitsPerLogit {
						t.Errorf("r=%d prior %v: got %.8f ± %.8f; want %.8f ± %.8f", r, prior, got.Ability, got.Uncertainty, want.Mean, want.SD)
					}
				}
			}
		})
	}
}

// TestPCMOneStepIsRasch: a block given as one step is §1's dichotomous item bit for bit on both
// estimators, and a one-step item's category probabilities are §1's P.
func TestPCMOneStepIsRasch(t *testing.T) {
	t.Parallel()
	for _, fw := range []string{"lexile", "quantile"} {
		f := testFramework(t, fw)
		t.Run(fw, func(t *testing.T) {
			t.Parallel()
			plain := []Difficulty{{Measure: 320, Count: 1}, {Measure: 610, Count: 4}, {Measure: 900, Count: 1}}
			stepped := []Difficulty{{Count: 1, Steps: []float64{320}}, {Measure: 610, Count: 4}, {Measure: -1e9, Count: 1, Steps: []float64{900}}}
			for r := 0; r <= 6; r++ {
				a, errA := f.Standard(Test{Items: plain, Correct: r})
				b, errB := f.Standard(Test{Items: stepped, Correct: r})
				if errA != nil || errB != nil || a != b {
					t.Errorf("standard r=%d: got %v (%v); want %v (%v)", r, b, errB, a, errA)
				}
				prior := Normal{Mean: 450, SD: 200}
				a, errA = f.Bayes(Test{Items: plain, Correct: r}, prior)
				b, errB = f.Bayes(Test{Items: stepped, Correct: r}, prior)
				if errA != nil || errB != nil || a != b {
					t.Errorf("bayes r=%d: got %v (%v); want %v (%v)", r, b, errB, a, errA)
				}
			}
			for _, theta := range []float64{-2000, 0, 610, 3000} {
				cats, err := f.CategoryProbabilities(theta, []float64{610}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if p := f.Probability(theta, 610); len(cats) != 2 || math.Abs(cats[1]-p) > 1e-15 || math.Abs(cats[0]-(1-p)) > 1e-15 {
					t.Errorf("θ=%v: got %v; want [%v %v]", theta, cats, 1-p, p)
				}
			}
		})
	}
}

// TestPCMLogSpace: with steps 10 and 300 logits from the ability, no probability overflows or is
// NaN, they sum to 1, and every category that is representable keeps its exact ratio to the one
// below (P(h)/P(h−1) = e^(z_h)), so the small categories are not rounded away.
func TestPCMLogSpace(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "quantile") // λ = 0
	s := f.UnitsPerLogit
	for _, tc := range []struct {
		name  string
		theta float64
		steps []float64
	}{
		{"step 10 logits above", 0, []float64{-s, 10 * s, 0}},
		{"step 10 logits below", 0, []float64{-10 * s, s, 2 * s}},
		{"every step 300 logits below", 0, []float64{-300 * s, -299 * s, -301 * s}},
		{"every step 300 logits above", 0, []float64{300 * s, 301 * s}},
		{"steps ±20 logits", 0, []float64{-20 * s, 20 * s, -20 * s, 20 * s}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cats, err := f.CategoryProbabilities(tc.theta, tc.steps, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for h, p := range cats {
				if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
					t.Fatalf("P(%d) = %v", h, p)
				}
				sum += p
				if h == 0 || p < 1e-290 || cats[h-1] < 1e-290 {
					continue
				}
				z := (tc.theta-tc.steps[h-1])/s + 0 // λ = 0
				if got := math.Log(p / cats[h-1]); math.Abs(got-z) > 1e-9*math.Max(1, math.Abs(z)) {
					t.Errorf("log P(%d)/P(%d) got %v; want %v", h, h-1, got, z)
				}
			}
			if math.Abs(sum-1) > 1e-14 {
				t.Errorf("probabilities sum to %v; want 1", sum)
			}
			// The estimators' E and V against the reference at the same point.
			p, _ := f.prepared()
			it, err := p.prepare(Test{Items: []Difficulty{{Count: 1, Steps: tc.steps}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			x := (tc.theta - it.centre) / s
			e, info := it.score(x, 0)
			we, wv, _, _ := newPCMRef(f).moments(tc.theta, tc.steps)
			if math.Abs(e-we) > 1e-12*math.Max(we, 1e-300) && math.Abs(e-we) > 1e-300 {
				t.Errorf("E got %v; want %v", e, we)
			}
			if math.Abs(info-wv) > 1e-9*wv || !(info > 0) && wv > 0 {
				t.Errorf("V got %v; want %v", info, wv)
			}
		})
	}
}

// TestPCMErrors: a non-finite step, a count below 1 and a raw score above the maximum points are
// errors naming the problem; a raw score of M is not.
func TestPCMErrors(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	for _, tc := range []struct {
		name string
		t    Test
		want string
	}{
		{"NaN step", Test{Items: []Difficulty{{Count: 1, Steps: []float64{1, math.NaN()}}}}, "item 0: step 2: difficulty NaN is not finite"},
		{"infinite single step", Test{Items: []Difficulty{{Count: 1, Steps: []float64{math.Inf(1)}}}}, "item 0: difficulty +Inf is not finite"},
		{"zero count", Test{Items: []Difficulty{{Measure: 1, Count: 1}, {Count: 0, Steps: []float64{1, 2}}}}, "item 1: count 0 is below 1"},
		{"score above M", Test{Items: []Difficulty{{Count: 2, Steps: []float64{1, 2, 3}}, {Measure: 5, Count: 1}}, Correct: 8}, "raw score 8 is outside [0, 7]"},
		{"steps too far apart", Test{Items: []Difficulty{{Count: 1, Steps: []float64{-1e6, 1e6}}}, Correct: 1}, "at most 400 logits"},
		{"NaN first step", Test{Items: []Difficulty{{Measure: 1, Count: 1}, {Count: 1, Steps: []float64{math.NaN(), 1, 2}}}}, "item 1: step 1: difficulty NaN is not finite"},
		{"−Inf middle step", Test{Items: []Difficulty{{Count: 1, Steps: []float64{1, math.Inf(-1), 2}}}}, "item 0: step 2: difficulty -Inf is not finite"},
		{"+Inf last step", Test{Items: []Difficulty{{Count: 1, Steps: []float64{1, 2, math.Inf(1)}}}}, "item 0: step 3: difficulty +Inf is not finite"},
		{"NaN step before a zero count", Test{Items: []Difficulty{{Count: 0, Steps: []float64{1, math.NaN()}}}}, "item 0: step 2: difficulty NaN is not finite"},
		{"maximum score 2^31", Test{Items: []Difficulty{{Measure: 1, Count: 2}, {Count: (math.MaxInt32 - 1) / 2, Steps: []float64{1, 2}}}}, "maximum score above 2^31"},
		{"count 2^31", Test{Items: []Difficulty{{Count: math.MaxInt32 + 1, Steps: []float64{1, 2}}}}, "maximum score above 2^31"},
		{"count 2^62 (its product would overflow)", Test{Items: []Difficulty{{Count: 1 << 62, Steps: []float64{1, 2, 3, 4}}}}, "maximum score above 2^31"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, errS := f.Standard(tc.t)
			_, errB := f.Bayes(tc.t, Normal{Mean: 500, SD: 100})
			for _, err := range []error{errS, errB} {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("got %v; want an error containing %q", err, tc.want)
				}
			}
		})
	}
	ok := Test{Items: []Difficulty{{Count: 2, Steps: []float64{1, 2, 3}}, {Measure: 5, Count: 1}}, Correct: 7}
	if _, err := f.Standard(ok); err != nil {
		t.Errorf("raw score M: got %v; want no error", err)
	}
	// The largest maximum score taken: 1 + 2·(2^31 − 2)/2 = 2^31 − 1.
	most := Test{Items: []Difficulty{{Measure: 1, Count: 1}, {Count: (math.MaxInt32 - 1) / 2, Steps: []float64{1, 2}}}, Correct: 5}
	if _, err := f.Standard(most); err != nil {
		t.Errorf("maximum score 2^31 − 1: got %v; want no error", err)
	}
	if got := ok.MaxScore(); got != 7 {
		t.Errorf("MaxScore got %d; want 7", got)
	}
}

// TestPointsAndMaxScore pins the API's small rules: Points takes Score, or 1 for Correct with
// Score 0; MaxScore is len(Steps) or 1; TestOf carries steps and sums points.
func TestPointsAndMaxScore(t *testing.T) {
	t.Parallel()
	poly := Item{ID: "P", Difficulty: 500, Steps: []float64{400, 500, 600}}
	dich := Item{ID: "D", Difficulty: 300}
	one := Item{ID: "O", Difficulty: 300, Steps: []float64{300}}
	for _, tc := range []struct {
		name string
		got  int
		want int
	}{
		{"Correct only", Answer{Item: dich, Correct: true}.Points(), 1},
		{"wrong", Answer{Item: dich}.Points(), 0},
		{"Score 2", Answer{Item: poly, Score: 2}.Points(), 2},
		{"Score 1 with Correct", Answer{Item: dich, Score: 1, Correct: true}.Points(), 1},
		{"Response Score 3", Response{ID: "P", Score: 3}.Points(), 3},
		{"Response Correct", Response{ID: "D", Correct: true}.Points(), 1},
		{"MaxScore polytomous", poly.MaxScore(), 3},
		{"MaxScore dichotomous", dich.MaxScore(), 1},
		{"MaxScore one step", one.MaxScore(), 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %d; want %d", tc.name, tc.got, tc.want)
		}
	}
	tt := TestOf([]Answer{{Item: poly, Score: 2}, {Item: dich, Correct: true}, {Item: one}})
	if tt.Correct != 3 || len(tt.Items[0].Steps) != 3 || tt.Items[1].Steps != nil || len(tt.Items[2].Steps) != 1 || tt.MaxScore() != 5 {
		t.Errorf("TestOf got %+v (max %d); want Correct 3, the items' steps, max 5", tt, tt.MaxScore())
	}
	// An item given by its one step alone (no Difficulty) is the dichotomous item of that
	// difficulty on every path.
	f := testFramework(t, "lexile")
	bare := []Answer{{Item: Item{Steps: []float64{300}}, Correct: true}, {Item: Item{Steps: []float64{700}}}}
	full := []Answer{{Item: Item{Difficulty: 300}, Correct: true}, {Item: Item{Difficulty: 700}}}
	a, errA := f.Standard(TestOf(bare))
	b, errB := f.Standard(TestOf(full))
	if errA != nil || errB != nil || a != b {
		t.Errorf("standard: one step alone got %v (%v); want %v (%v)", a, errA, b, errB)
	}
	fa, errA := f.PersonFit(a.Ability, bare)
	fb, errB := f.PersonFit(a.Ability, full)
	if errA != nil || errB != nil || fa != fb {
		t.Errorf("fit: one step alone got %+v (%v); want %+v (%v)", fa, errA, fb, errB)
	}
	if _, err := NewBank(f, []Item{{ID: "X", Framework: "lexile", Difficulty: 500, Steps: []float64{501}}}); err == nil ||
		!strings.Contains(err.Error(), `item "X": its single step 501 is not its difficulty 500`) {
		t.Errorf("NewBank with a single step off the difficulty: got %v; want an error", err)
	}
}

// TestPCMSimulation is §9's study on a test mixing dichotomous and 0–2/0–3 items: 2,000 students
// θ ~ N(500, 300²), 40 items (20 dichotomous, 10 of 0–2, 10 of 0–3, locations over ±2 logits),
// answers drawn from the model: the 95% intervals of the MLE and of the EAP (true prior) cover
// the true θ 93–97% of the time, and the EAP's RMSE is below the MLE's.
func TestPCMSimulation(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	s := f.UnitsPerLogit
	rng := rand.New(rand.NewPCG(28, 13))
	var items []Difficulty
	for i := 0; i < 40; i++ {
		c := 500 + s*(-2+4*float64(i)/39)
		switch i % 4 {
		case 0, 2:
			items = append(items, Difficulty{Measure: c, Count: 1})
		case 1:
			items = append(items, Difficulty{Count: 1, Steps: []float64{c - 0.6*s, c + 0.6*s}})
		default:
			items = append(items, Difficulty{Count: 1, Steps: []float64{c - s, c + 0.3*s, c + 0.7*s}})
		}
	}
	prior := Normal{Mean: 500, SD: 300}
	const students = 2000
	var coverMLE, coverEAP int
	var seMLE, seEAP float64
	var cats []float64
	for i := 0; i < students; i++ {
		theta := prior.Mean + prior.SD*rng.NormFloat64()
		r := 0
		for _, d := range items {
			cats, _ = f.CategoryProbabilities(theta, blockSteps(d), cats[:0])
			u := rng.Float64()
			x := 0
			for acc := cats[0]; x < len(cats)-1 && u >= acc; acc += cats[x] {
				x++
			}
			r += x
		}
		tt := Test{Items: items, Correct: r}
		mle, err := f.Standard(tt)
		if err != nil {
			t.Fatal(err)
		}
		eap, err := f.Bayes(tt, prior)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(mle.Ability-theta) <= 1.959964*mle.Uncertainty {
			coverMLE++
		}
		if math.Abs(eap.Ability-theta) <= 1.959964*eap.Uncertainty {
			coverEAP++
		}
		seMLE += (mle.Ability - theta) * (mle.Ability - theta)
		seEAP += (eap.Ability - theta) * (eap.Ability - theta)
	}
	for _, c := range []struct {
		name  string
		cover int
	}{{"MLE", coverMLE}, {"EAP", coverEAP}} {
		rate := float64(c.cover) / students
		t.Logf("%s coverage %.4f", c.name, rate)
		if rate < 0.93 || rate > 0.97 {
			t.Errorf("%s coverage got %.4f; want 0.93–0.97", c.name, rate)
		}
	}
	t.Logf("RMSE MLE %.2f, EAP %.2f", math.Sqrt(seMLE/students), math.Sqrt(seEAP/students))
	if seEAP >= seMLE {
		t.Errorf("EAP RMSE %.2f is not below the MLE's %.2f", math.Sqrt(seEAP/students), math.Sqrt(seMLE/students))
	}
}

// TestStrandsPolytomous: a strand's estimate is §3's EAP of its own answers, polytomous ones
// counted by points, under N(overall, strandSpread²) (§6), and scoring a 0–3 item 3 instead of 0
// raises its strand only.
func TestStrandsPolytomous(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	a := []Answer{
		{Item: Item{ID: "1", Strand: "A", Difficulty: 500, Steps: []float64{400, 500, 600}}, Score: 2},
		{Item: Item{ID: "2", Strand: "B", Difficulty: 450}, Correct: true},
		{Item: Item{ID: "3", Strand: "A", Difficulty: 700}},
		{Item: Item{ID: "4", Strand: "B", Difficulty: 650, Steps: []float64{700, 600}}, Score: 1},
	}
	bench := Benchmark{Lower: 450, Upper: 650}
	got := f.Strands(a, 550, bench)
	prior := Normal{Mean: 550, SD: f.StrandSpread}
	for i, want := range [][]Answer{{a[0], a[2]}, {a[1], a[3]}} {
		est, err := f.Bayes(TestOf(want), prior)
		if err != nil {
			t.Fatal(err)
		}
		if got[i].Ability != est.Ability || got[i].Uncertainty != est.Uncertainty {
			t.Errorf("strand %s: got %v ± %v; want %v ± %v", got[i].Name, got[i].Ability, got[i].Uncertainty, est.Ability, est.Uncertainty)
		}
	}
	a[0].Score = 3
	higher := f.Strands(a, 550, bench)
	if !(higher[0].Ability > got[0].Ability) || higher[1] != got[1] {
		t.Errorf("score 3: strands %+v; want A above %v and B unchanged %+v", higher, got[0].Ability, got[1])
	}
}

// TestPCMFastSums: the multiplicative sums agree with the log-space ones wherever they are used
// (E to 1e-12, V and the log normaliser to 1e-12 relative), and are not used where a term could
// leave e^±340 or a block has more than fastMaxSteps steps; the plain E (powerMean) is within
// 9e-16·m of the sums about h.
func TestPCMFastSums(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	p, _ := f.prepared()
	for _, tc := range pcmTests() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hasPoly := false
			for _, d := range tc.items {
				hasPoly = hasPoly || len(d.Steps) >= 2
			}
			if !hasPoly {
				return
			}
			it, err := p.prepare(Test{Items: tc.items, Correct: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			pm := &it.pmeta
			used := 0
			for x := -60.0; x <= 60; x += 0.37 {
				if !pm.fast(x) {
					if pm.top <= fastMaxSteps && pm.reach+float64(pm.top)*math.Abs(x) <= fastReach {
						t.Fatalf("x=%v: not fast within the bound", x)
					}
					continue
				}
				used++
				var slow float64
				for i := 0; i < len(it.poly); {
					m, blocks, next := it.poly.group(i)
					i = next
					for ; len(blocks) > 0; blocks = blocks[1+m:] {
						w, c := blocks[0], blocks[1:1+m]
						block := append(polyPart{float64(m), 1}, blocks[:1+m]...)
						h1, e1, v1 := block.slowScore(pm, x)
						h2, e2, v2 := block.powerScore(math.Exp(x))
						if d := (h1 - h2 + e1 - e2) / w; math.Abs(d) > 1e-12 || math.Abs(v1-v2) > 1e-12*v1 {
							t.Errorf("x=%v %d steps: fast E %v, V %v; log space E %v, V %v", x, m, (h2+e2)/w, v2/w, (h1+e1)/w, v1/w)
						}
						// The plain sums: E within plainInfo's 9e-16·m of the sums about h, V the same.
						e3, v3 := block.powerMean(math.Exp(x))
						if d := (e3 - h2 - e2) / w; math.Abs(d) > 9e-16*float64(m) || math.Abs(v3-v2) > 1e-15*v2 {
							t.Errorf("x=%v %d steps: plain E %v, V %v; about h E %v, V %v", x, m, e3/w, v3/w, (h2+e2)/w, v2/w)
						}
						var buf [fastMaxSteps]float64
						slow += w * logNorm(pm.logits(c, buf[:]), x)
					}
				}
				if fast := it.logNormPoly(x); math.Abs(fast-slow) > 1e-12*math.Max(1, math.Abs(slow)) {
					t.Errorf("x=%v: log normaliser fast %v; log space %v", x, fast, slow)
				}
			}
			switch {
			case used == 0 && pm.top <= fastMaxSteps:
				t.Error("the fast sums were never used")
			case used > 0 && pm.top > fastMaxSteps:
				t.Errorf("the fast sums were used %d times with a block of %d steps", used, pm.top)
			}
		})
	}
}

// TestPCMPlainSums: the score takes the plain E (powerMean) from an information of plainInfo·M
// up, and below it the sums about h, which keep the tails: one 0–2 item whose middle category
// holds all but e^−40 and e^−45 of the mass at x = 0 has E − 1 = p_2 − p_0 to 1e-9 relative
// (the plain E rounds to 1).
func TestPCMPlainSums(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		info, most float64
		want       bool
	}{
		{0.01 * 80, 80, true},
		{math.Nextafter(0.01*80, 0), 80, false},
		{0.01, 1, true},
		{math.Nextafter(0.01, 0), 1, false},
		{0, 40, false},
	} {
		if got := plainEnough(tc.info, tc.most); got != tc.want {
			t.Errorf("plainEnough(%v, %v) = %v; want %v", tc.info, tc.most, got, tc.want)
		}
	}
	f := testFramework(t, "quantile") // λ = 0: the steps below are the u_k
	p, err := f.prepared()
	if err != nil {
		t.Fatal(err)
	}
	s := f.UnitsPerLogit
	it, err := p.prepare(Test{Items: []Difficulty{{Count: 1, Steps: []float64{-40 * s, 45 * s}}}, Correct: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := -it.centre / s // θ = 0
	if !it.pmeta.fast(x) {
		t.Fatalf("x=%v: not in the multiplicative sums' range", x)
	}
	excess, info := it.score(x, 1)
	want := math.Exp(-45) - math.Exp(-40) // p_2 − p_0, each relative to p_1 ≈ 1
	if math.Abs(excess-want) > 1e-9*math.Abs(want) || !(info > 0) {
		t.Errorf("E − 1 = %v, information %v; want %v and a positive information", excess, info, want)
	}
	if e, _ := it.poly.powerMean(math.Exp(x)); e != 1 {
		t.Errorf("plain E %v; want it rounded to 1 (the case the sums about h are for)", e)
	}
}

// TestPCMBayesExtremes: zero and perfect scores under priors far from the items, a vague prior,
// and a 5,000-count block give a finite EAP with a positive SD, within 1e-6 logits of the
// reference where its grid reaches, and never an error.
func TestPCMBayesExtremes(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	ref := newPCMRef(f)
	ten := pcmTests()[2].items
	mixed := pcmTests()[3].items
	block := []Difficulty{{Count: 5000, Steps: []float64{400, 650, 500}}, {Measure: 600, Count: 2}}
	for _, tc := range []struct {
		name  string
		items []Difficulty
		r     int
		prior Normal
		check bool // compare with the reference
	}{
		{"ten 0–3, nothing, prior far above", ten, 0, Normal{Mean: 3000, SD: 300}, true},
		{"ten 0–3, everything, prior far below", ten, 30, Normal{Mean: -3000, SD: 300}, true},
		{"mixed, nothing, prior 50,000 above", mixed, 0, Normal{Mean: 50000, SD: 100}, false},
		{"mixed, everything, vague prior", mixed, maxScore(mixed), Normal{Mean: 500, SD: 1e6}, false},
		{"5,000-count block, nothing, prior above", block, 0, Normal{Mean: 3000, SD: 300}, false},
		{"5,000-count block, half, prior near", block, 7500, Normal{Mean: 500, SD: 300}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := f.Bayes(Test{Items: tc.items, Correct: tc.r}, tc.prior)
			if err != nil || !finite(got.Ability) || !(got.Uncertainty > 0) || !finite(got.Uncertainty) {
				t.Fatalf("got %v, %v; want a finite EAP with a positive SD", got, err)
			}
			if !tc.check {
				return
			}
			want := ref.posterior(tc.items, float64(tc.r), tc.prior)
			if math.Abs(got.Ability-want.Mean) > 1e-6*f.UnitsPerLogit || math.Abs(got.Uncertainty-want.SD) > 1e-6*f.UnitsPerLogit {
				t.Errorf("got %.8f ± %.8f; want %.8f ± %.8f", got.Ability, got.Uncertainty, want.Mean, want.SD)
			}
		})
	}
}

// TestPCMExtremeLambda: with a successAtMatch of 1e-305 (λ ≈ −702), a step's ratio e^(λ − δ)
// would leave the range stepExp is exact in: the blocks are held as logs and the log-space sums
// used. Since λ only shifts the scale (θ enters as θ/s + λ), the MLE and EAP for every raw score
// are those of λ = 0 (the quantile framework, its prior shifted alike) less λ·s, within 1e-6
// logits.
func TestPCMExtremeLambda(t *testing.T) {
	t.Parallel()
	base := testFramework(t, "quantile") // λ = 0
	f := testFramework(t, "quantile")
	f.SuccessAtMatch = 1e-305
	if err := f.Prepare(); err != nil {
		t.Fatal(err)
	}
	items := []Difficulty{{Count: 1, Steps: []float64{400, 600}}, {Count: 1, Steps: []float64{500, 450, 700}}, {Measure: 550, Count: 1}}
	p, err := f.prepared()
	if err != nil {
		t.Fatal(err)
	}
	it, err := p.prepare(Test{Items: items}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !it.pmeta.logs {
		t.Fatalf("λ = %v: the blocks hold ratios; want logs", p.lambda)
	}
	shift := p.lambda * f.UnitsPerLogit
	tol := 1e-6 * f.UnitsPerLogit
	for r := 0; r <= maxScore(items); r++ {
		test := Test{Items: items, Correct: r}
		got, err := f.Standard(test)
		want, errW := base.Standard(test)
		if err != nil || errW != nil || math.Abs(got.Ability-(want.Ability-shift)) > tol || math.Abs(got.Uncertainty-want.Uncertainty) > tol {
			t.Errorf("r=%d: MLE got %v, %v; want %.8f ± %.8f", r, got, err, want.Ability-shift, want.Uncertainty)
		}
		prior := Normal{Mean: 500 - shift, SD: 200}
		bay, err := f.Bayes(test, prior)
		wantB, errW := base.Bayes(test, Normal{Mean: 500, SD: 200})
		if err != nil || errW != nil || math.Abs(bay.Ability-(wantB.Ability-shift)) > tol || math.Abs(bay.Uncertainty-wantB.Uncertainty) > tol {
			t.Errorf("r=%d: EAP got %v, %v; want %.8f ± %.8f", r, bay, err, wantB.Ability-shift, wantB.Uncertainty)
		}
	}
}
