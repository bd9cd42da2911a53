package measure

import (
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
	post, err := it.posterior((prior.Mean-it.centre)*p.invS, prior.SD*p.invS)
	if err != nil {
		return Estimate{}, fmt.Errorf("bayes estimate: %w", err)
	}
	return Estimate{Ability: it.centre + p.s*post.Mean, Uncertainty: p.s * post.SD}, nil
}

// posterior returns the posterior mean and SD in logits for prior N(mu, tau²) in logits.
func (it *items) posterior(mu, tau float64) (Normal, error) {
	if math.Abs(mu) > maxPriorLogits || tau > maxPriorLogits {
		return Normal{}, errors.New("prior is more than 100,000 logits from the items or wider than that")
	}
	if tau < minPriorLogits {
		return Normal{Mean: mu, SD: tau}, nil
	}
	mode, curv := it.mode(mu, tau)
	scale := math.Sqrt2 / math.Sqrt(curv)
	top := it.logPost(mode, mu, tau)
	main := it.gaussHermite(mainRule, mode, scale, top, mu, tau)
	check := it.gaussHermite(checkRule, mode, scale, top, mu, tau)
	if math.Abs(main.Mean-check.Mean) < checkTol && math.Abs(main.SD-check.SD) < checkTol {
		return main, nil
	}
	return it.posteriorDense(mode, scale, top, mu, tau), nil
}

// mode finds the posterior mode by safeguarded Newton on the (concave) log-posterior and returns
// it with the curvature −ℓ” there. ℓ'(x) = r − Σ w_i·P_i(x) − (x − mu)/tau².
func (it *items) mode(mu, tau float64) (x, curv float64) {
	prec := 1 / (tau * tau)
	sum, info := it.score(mu)
	g := it.r - sum
	// ℓ' is decreasing, and Σ P_i moves the same way as x, so the mode lies between mu and
	// mu + tau²·ℓ'(mu).
	lo, hi := mu, mu+g*tau*tau
	if hi < lo {
		lo, hi = hi, lo
	}
	x = mu
	for iter := 0; iter < 200; iter++ {
		d := g - (x-mu)*prec
		curv = info + prec
		if d > 0 {
			lo = x
		} else {
			hi = x
		}
		next := x + d/curv
		if !(next >= lo && next <= hi) {
			next = 0.5 * (lo + hi)
		}
		step := next - x
		x = next
		sum, info = it.score(x)
		g = it.r - sum
		if math.Abs(step) < 1e-10 || hi-lo < 1e-12 {
			break
		}
	}
	return x, info + prec
}

// logPost is the log-posterior at x up to a constant:
// ℓ(x) = −(n − r)·x − Σ w_i·log(1 + e^(−x)·k_i) − (x − mu)²/(2·tau²).
// With unit counts the sum of logs is the log of a product, renormalised before it can overflow
// (every factor is below e^330 while |x| + max|δ| + |λ| <= 330); elsewhere each term is a stable
// softplus.
func (it *items) logPost(x, mu, tau float64) float64 {
	d := (x - mu) / tau
	base := -(it.n-it.r)*x - 0.5*d*d
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
// multiplication chain's latency; each is folded into the sum before it can overflow (every
// factor is below e^330, so a product below 1e150 times one factor stays finite).
func (it *items) logProduct(e float64) float64 {
	const fold = 1e150
	k := it.k
	p0, p1, p2, p3, acc := 1.0, 1.0, 1.0, 1.0, 0.0
	i := 0
	for ; i+4 <= len(k); i += 4 {
		if p0 > fold || p1 > fold || p2 > fold || p3 > fold {
			acc += math.Log(p0) + math.Log(p1) + math.Log(p2) + math.Log(p3)
			p0, p1, p2, p3 = 1, 1, 1, 1
		}
		p0 *= 1 + e*k[i]
		p1 *= 1 + e*k[i+1]
		p2 *= 1 + e*k[i+2]
		p3 *= 1 + e*k[i+3]
	}
	for ; i < len(k); i++ {
		if p0 > fold {
			acc += math.Log(p0)
			p0 = 1
		}
		p0 *= 1 + e*k[i]
	}
	return acc + math.Log(p0) + math.Log(p1) + math.Log(p2) + math.Log(p3)
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

// posteriorDense is the fallback for posteriors far from normal: the trapezoid rule over the
// interval where the (log-concave) posterior is within e^−40 of its mode, with the step halved
// until mean and SD change by less than 1e-10 logits.
func (it *items) posteriorDense(mode, scale, top, mu, tau float64) Normal {
	edge := func(dir float64) float64 {
		step := scale
		for k := 0; k < 60 && it.logPost(mode+dir*step, mu, tau)-top > -40; k++ {
			step *= 2
		}
		return mode + dir*step
	}
	a, b := edge(-1), edge(1)
	var m0, m1, m2 float64
	add := func(x, weight float64) {
		h := weight * math.Exp(it.logPost(x, mu, tau)-top)
		dx := x - mode
		m0 += h
		m1 += h * dx
		m2 += h * dx * dx
	}
	moments := func() Normal {
		mean := m1 / m0
		return Normal{Mean: mode + mean, SD: math.Sqrt(math.Max(m2/m0-mean*mean, 0))}
	}
	pts := 64
	h := (b - a) / float64(pts)
	add(a, 0.5)
	add(b, 0.5)
	for i := 1; i < pts; i++ {
		add(a+float64(i)*h, 1)
	}
	prev := moments()
	for round := 0; round < 12; round++ {
		for i := 0; i < pts; i++ { // midpoints of the current grid
			add(a+(float64(i)+0.5)*h, 1)
		}
		pts *= 2
		h /= 2
		cur := moments()
		if math.Abs(cur.Mean-prev.Mean) < 1e-10 && math.Abs(cur.SD-prev.SD) < 1e-10 {
			return cur
		}
		prev = cur
	}
	return prev
}
