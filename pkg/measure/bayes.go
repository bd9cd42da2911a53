package measure

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/integrate/quad"
)

// Gauss–Hermite rules for the posterior integrals (§3). The main rule gives the answer; the
// check rule, with different nodes, must agree with it to checkTol or the posterior is too far
// from normal for Gauss–Hermite and the adaptive trapezoid of posteriorDense takes over.
// Nodes come from gonum once, at start-up.
const (
	mainNodes  = 24
	checkNodes = 12
	checkTol   = 1e-7 // logits
	// maxPriorLogits bounds |prior mean − test centre| and the prior SD, in logits.
	maxPriorLogits = 1e5
	// minPriorLogits: a prior SD below this (logits) is a certainty; the posterior is the prior.
	minPriorLogits = 1e-7
	// denseCut: the trapezoid fallback integrates where the density is within e^−denseCut of the
	// mode's (the mass left out is below 1e-13 of the total).
	denseCut = 30
	// denseTol: the fallback stops when halving its step moves mean and SD by less than this
	// (logits); see posteriorDense.
	denseTol = 1e-7
)

type ghRule struct{ z, w []float64 }

var mainRule, checkRule = newRule(mainNodes), newRule(checkNodes)

func newRule(n int) ghRule {
	r := ghRule{z: make([]float64, n), w: make([]float64, n)}
	quad.Hermite{}.FixedLocations(r.z, r.w, math.Inf(-1), math.Inf(1))
	return r
}

// Bayes is §3's estimate with a prior: the posterior mean (EAP) and posterior SD under prior
// (measure units), by Gauss–Hermite quadrature centred on the posterior mode and scaled by its
// curvature. Extreme raw scores need no adjustment here.
func (f *Framework) Bayes(t Test, prior Normal) (Estimate, error) {
	return f.BayesContext(context.Background(), t, prior)
}

// BayesContext is Bayes that gives up, with ctx's error, soon after ctx is done: the only long
// part, the fallback integration, looks at ctx every few evaluations. Its work is bounded by the
// test's size whatever ctx does (docs/method.md, the cost of an estimate).
func (f *Framework) BayesContext(ctx context.Context, t Test, prior Normal) (Estimate, error) {
	p, err := f.prepared()
	if err != nil {
		return Estimate{}, err
	}
	var buf [2 * stackItems]float64
	it, err := p.prepare(t, buf[:])
	if err != nil {
		return Estimate{}, fmt.Errorf("bayes estimate: %w", err)
	}
	if !finite(prior.Mean) || !finite(prior.SD) || prior.SD <= 0 {
		return Estimate{}, fmt.Errorf("bayes estimate: prior N(%v, %v²) is not a finite mean with a positive SD", prior.Mean, prior.SD)
	}
	post, err := it.posterior(ctx, (prior.Mean-it.centre)*p.invS, prior.SD*p.invS)
	if err != nil {
		return Estimate{}, fmt.Errorf("bayes estimate: %w", err)
	}
	return Estimate{Ability: it.centre + p.s*post.Mean, Uncertainty: p.s * post.SD}, nil
}

// posterior returns the posterior mean and SD in logits for prior N(mu, tau²) in logits, or an
// error if the integration does not give a finite mean and a positive, finite SD (it always
// should; the check keeps a NaN from ever reaching a caller).
func (it *items) posterior(ctx context.Context, mu, tau float64) (Normal, error) {
	if math.Abs(mu) > maxPriorLogits || tau > maxPriorLogits {
		return Normal{}, errors.New("prior is more than 100,000 logits from the items or wider than that")
	}
	if tau < minPriorLogits {
		return Normal{Mean: mu, SD: tau}, nil
	}
	mode, curv := it.mode(mu, tau)
	scale := math.Sqrt2 / math.Sqrt(curv)
	top := it.logPost(mode, mu, tau)
	post := it.gaussHermite(mainRule, mode, scale, top, mu, tau)
	check := it.gaussHermite(checkRule, mode, scale, top, mu, tau)
	if !(math.Abs(post.Mean-check.Mean) < checkTol && math.Abs(post.SD-check.SD) < checkTol) {
		var err error
		if post, err = it.posteriorDense(ctx, mode, scale, top, mu, tau); err != nil {
			return Normal{}, err
		}
	}
	if !finite(post.Mean) || !finite(post.SD) || post.SD <= 0 {
		return Normal{}, fmt.Errorf("posterior integration failed (mean %v, SD %v logits; mode %v, curvature %v)",
			post.Mean, post.SD, mode, curv)
	}
	return post, nil
}

// maxModeIter bounds the root searches of mode and mle. Every two iterations at least halve the
// step, and the bracket is at most about as wide as the test's spread of difficulties (400
// logits) — mle's from the start, mode's once narrow has run — so about 2·log2(400/10⁻¹⁰) ≈ 85
// iterations are the worst case; typical searches take 3 to 10.
const maxModeIter = 300

// mode finds the posterior mode and returns it with the curvature −ℓ” there. The log-posterior is
// strictly concave (the Rasch log-likelihood is concave, the normal log-prior strictly so), so
// ℓ'(x) = r − Σ w_i·P_i(x) − (x − mu)/tau² is strictly decreasing and has one root, bracketed by
// mu and mu + tau²·ℓ'(mu) (Σ P_i moves the same way as x). The search is Newton safeguarded by
// that bracket (as rtsafe): a Newton step is taken only if it lands strictly inside the bracket
// and is at most half as long as the step before the previous one; otherwise the step bisects
// the bracket. Far from the items the likelihood is flat and a pure Newton step jumps from one
// end of the bracket to the other and back; the length rule turns that into bisection, so the
// search always converges (to |Δx| < 1e-10 logits). The first time Newton is refused, the
// bracket is also narrowed by bounds that cost O(1) per evaluation (see narrow).
func (it *items) mode(mu, tau float64) (x, curv float64) {
	prec := 1 / (tau * tau)
	excess, info := it.score(mu, it.r)
	g := -excess // r − Σ w_i·P_i(mu)
	lo, hi := mu, mu+g*tau*tau
	if hi < lo {
		lo, hi = hi, lo
	}
	x = mu
	// The lengths of the last two steps; the first Newton step is always allowed.
	last, before := hi-lo, math.Inf(1)
	// narrow's bounds hold for dichotomous items only; with polytomous ones the search bisects.
	narrowed := it.poly != nil
	for iter := 0; iter < maxModeIter; iter++ {
		d := g - (x-mu)*prec
		curv = info + prec
		switch {
		case d > 0:
			lo = x
		case d < 0:
			hi = x
		default:
			return x, curv
		}
		newton := d / curv
		if math.Abs(newton) < 1e-10 { // converged: the step left is below the tolerance
			return x + newton, curv
		}
		next := x + newton
		if !(next > lo && next < hi) || math.Abs(newton) > 0.5*before {
			if !narrowed {
				narrowed = true
				lo, hi = it.narrow(lo, hi, mu, prec)
				before = math.Inf(1)
			}
			next = lo + 0.5*(hi-lo)
		}
		step := math.Abs(next - x)
		before, last = last, step
		x = next
		excess, info = it.score(x, it.r)
		g = -excess
		if hi-lo < 1e-10 {
			break
		}
	}
	return x, info + prec
}

// narrow shrinks a bracket [lo, hi] of the root of ℓ' with bounds that ignore how the
// difficulties are spread: every P_i(x) lies between P(x) of the hardest item (δ = dmax) and
// of the easiest (δ = dmin), so
//
//	L(x) = r − n·σ(x − dmin + λ) − (x − mu)·prec  <=  ℓ'(x)  <=  U(x) = r − n·σ(x − dmax + λ) − (x − mu)·prec
//
// (σ the logistic function). Both bounds decrease, so L(a) >= 0 puts a below the root and
// U(b) <= 0 puts b above it. Each is found by bisection to 1/64 logit, one exp per step: far
// from the items this turns a bracket of thousands of logits into one about as wide as the
// test's spread of difficulties without a single O(n) evaluation.
func (it *items) narrow(lo, hi, mu, prec float64) (float64, float64) {
	bound := func(x, delta float64) float64 {
		return it.r - it.n/(1+math.Exp(delta-it.lambda-x)) - (x-mu)*prec
	}
	// Largest a in [lo, hi] found with L(a) >= 0.
	if a, b := lo, hi; bound(b, it.dmin) < 0 {
		for k := 0; k < 200 && b-a > 1.0/64; k++ {
			m := a + 0.5*(b-a)
			if bound(m, it.dmin) >= 0 {
				a = m
			} else {
				b = m
			}
		}
		lo = a
	}
	// Smallest b in [lo, hi] found with U(b) <= 0.
	if a, b := lo, hi; bound(a, it.dmax) > 0 {
		for k := 0; k < 200 && b-a > 1.0/64; k++ {
			m := a + 0.5*(b-a)
			if bound(m, it.dmax) <= 0 {
				b = m
			} else {
				a = m
			}
		}
		hi = b
	}
	return lo, hi
}

// logPost is the log-posterior at x up to a constant:
// ℓ(x) = −(n − r)·x − Σ w_i·log(1 + e^(−x)·k_i) − (x − mu)²/(2·tau²).
// With unit counts the sum of logs is the log of a product, renormalised before it can overflow
// (every factor is below e^330 while |x| + max|δ| + |λ| <= 330); elsewhere each term is a stable
// softplus.
func (it *items) logPost(x, mu, tau float64) float64 {
	d := (x - mu) / tau
	base := -(it.n-it.r)*x - 0.5*d*d
	if it.poly != nil {
		base -= it.logNormPoly(x)
		if len(it.k) == 0 { // every block polytomous: no product of dichotomous terms to take
			return base
		}
	}
	if it.unit && math.Abs(x)+it.reach <= 330 {
		return base - it.logProduct(math.Exp(-x))
	}
	sum := 0.0
	for i, k := range it.k {
		z := math.Log(k) - x // log(e^(−x)·k)
		sum += it.w[i] * softplus(z)
	}
	return base - sum
}

// logProduct returns Σ log(1 + e·k_i) as the log of a product. Four running products break the
// multiplication chain's latency. A product above 2^500 has its binary exponent moved into an
// integer count before it can overflow (every factor is below e^330 < 2^477, so a product below
// 2^500 times one factor stays finite); this takes no call, so the loop keeps its products in
// registers. At the end the four products, each scaled into [1, 2), take a single log.
func (it *items) logProduct(e float64) float64 {
	const fold = 0x1p500
	k := it.k
	p0, p1, p2, p3, ex := 1.0, 1.0, 1.0, 1.0, 0
	for len(k) >= 4 {
		if p0 > fold || p1 > fold || p2 > fold || p3 > fold {
			p0, ex = mantissa(p0, ex)
			p1, ex = mantissa(p1, ex)
			p2, ex = mantissa(p2, ex)
			p3, ex = mantissa(p3, ex)
		}
		p0 *= 1 + e*k[0]
		p1 *= 1 + e*k[1]
		p2 *= 1 + e*k[2]
		p3 *= 1 + e*k[3]
		k = k[4:]
	}
	for _, ki := range k {
		if p0 > fold {
			p0, ex = mantissa(p0, ex)
		}
		p0 *= 1 + e*ki
	}
	p0, ex = mantissa(p0, ex)
	p1, ex = mantissa(p1, ex)
	p2, ex = mantissa(p2, ex)
	p3, ex = mantissa(p3, ex)
	return float64(ex)*math.Ln2 + math.Log(p0*p1*p2*p3)
}

// mantissa splits a positive, finite, normal p into m·2^x with m in [1, 2) and returns m and
// ex + x.
func mantissa(p float64, ex int) (float64, int) {
	b := math.Float64bits(p)
	return math.Float64frombits(b&(1<<52-1) | 1023<<52), ex + int(b>>52) - 1023
}

// softplus is log(1 + e^z) without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// gaussHermite integrates the posterior with x = mode + scale·z against e^(−z²):
// h(z) = exp(ℓ(x) − ℓ(mode) + z²) is close to 1 when the posterior is close to normal.
func (it *items) gaussHermite(rule ghRule, mode, scale, top, mu, tau float64) Normal {
	var m0, m1, m2 float64
	for j, z := range rule.z {
		dx := scale * z
		h := rule.w[j] * math.Exp(it.logPost(mode+dx, mu, tau)-top+z*z)
		m0 += h
		m1 += h * dx
		m2 += h * dx * dx
	}
	mean := m1 / m0
	return Normal{Mean: mode + mean, SD: math.Sqrt(math.Max(m2/m0-mean*mean, 0))}
}
