package measure

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Linear quantile regression (§15's fit), solved exactly: a vertex (basic) solution of the
// check-loss linear programme, reached by descent along the edges of the polyhedron as in
// Barrodale and Roberts' simplex. At a vertex, p observations (the basis) have zero residual and
// fix β; moving one of them off its fit, up or down, is an edge. The descent takes the edge whose
// directional derivative is most negative and goes along it to the minimum of the loss on that
// line (the loss is convex and piecewise linear there, so the minimum is a kink where another
// observation's residual reaches zero, which enters the basis). Every step lowers the loss, so
// no basis comes back and the descent ends, at a vertex where no edge descends: the optimum.
// The τ of a model are solved in a sweep from the median outwards, each starting from its
// neighbour's optimum, which is a few steps from its own.
//
// Tied data (students with the same measures) make degenerate vertices, where observations off
// the basis also sit on the fit and a descending direction need not be an edge. The descent
// therefore runs on the current measures perturbed by a seeded amount far below their
// resolution, where no vertex is degenerate; the coefficients it reports are those of its final
// basis on the unperturbed measures. That vertex is optimal for them too: the perturbed
// residuals' signs give a subgradient of zero there, and an unperturbed residual that differs in
// sign is zero, where any sign belongs to the subgradient.

// errRankDeficient reports a design whose columns are linearly dependent on the cohort.
var errRankDeficient = errors.New("the design is rank deficient: a prior takes too few distinct values for its spline")

// quantReg is a design and the state of its descent.
type quantReg struct {
	n, p int
	x    []float64 // row-major n×p
	y    []float64 // perturbed
	y0   []float64 // as given
	eps  float64   // residuals within eps of zero are on the fit

	basis   []int  // the p observations of the vertex
	inBasis []bool // by observation
	binv    []float64
	beta    []float64
	r       []float64
	side    []int8    // by observation: +1 or −1 off the fit, 0 on it, 2 in the basis
	g       []float64 // Σ ψ_τ(r_i)·x_i over the non-basic observations off the fit
	a       []float64 // gᵀ·column j of binv
	zero    []int     // non-basic observations on the fit
	zw      []float64 // x_iᵀ·binv of each of zero, row-major
	u       []float64
	cand    []breakpoint
	work    []float64
}

type breakpoint struct {
	t, w float64
	i    int
}

const (
	residualTol   = 1e-10 // relative to the largest |y|
	perturbation  = 1e-8  // relative to the largest |y|
	derivativeTol = 1e-9  // relative to the size of a derivative's largest term
	maxSteps      = 1 << 20
)

func newQuantReg(x, y []float64, p int) *quantReg {
	n := len(y)
	scale := 1.0
	for _, v := range y {
		scale = max(scale, math.Abs(v))
	}
	yp := make([]float64, n)
	seed := uint64(0x2545F4914F6CDD1D)
	for i, v := range y {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		// Uniform in ±[0.5, 1) times the perturbation: never zero, and at least 50 times the
		// tolerance that counts a residual as on the fit, so that perturbed ties come apart.
		u := 0.5 + float64(seed>>11)/(1<<54)
		if seed&1 == 0 {
			u = -u
		}
		yp[i] = v + u*perturbation*scale
	}
	return &quantReg{n: n, p: p, x: x, y: yp, y0: y, eps: scale * residualTol,
		inBasis: make([]bool, n), binv: make([]float64, p*p), beta: make([]float64, p),
		r: make([]float64, n), side: make([]int8, n), g: make([]float64, p), a: make([]float64, p), u: make([]float64, n),
		work: make([]float64, 2*p*p)}
}

func (q *quantReg) row(i int) []float64 { return q.x[i*q.p : (i+1)*q.p] }

// fitTaus solves every τ of taus and returns their coefficients and check losses. progress,
// when not nil, is called after each τ.
func (q *quantReg) fitTaus(taus []float64, progress func()) (coef [][]float64, loss []float64, err error) {
	if q.n < q.p {
		return nil, nil, fmt.Errorf("%d observations for %d coefficients", q.n, q.p)
	}
	if err := q.start(); err != nil {
		return nil, nil, err
	}
	coef = make([][]float64, len(taus))
	loss = make([]float64, len(taus))
	mid := len(taus) / 2
	var midBasis []int
	do := func(k int) error {
		if err := q.solve(taus[k]); err != nil {
			return fmt.Errorf("τ %v: %w", taus[k], err)
		}
		coef[k], loss[k] = q.unperturbed(taus[k])
		if progress != nil {
			progress()
		}
		return nil
	}
	for k := mid; k < len(taus); k++ {
		if err := do(k); err != nil {
			return nil, nil, err
		}
		if k == mid {
			midBasis = slices.Clone(q.basis)
		}
	}
	if mid > 0 {
		if err := q.setBasis(midBasis); err != nil {
			return nil, nil, err
		}
	}
	for k := mid - 1; k >= 0; k-- {
		if err := do(k); err != nil {
			return nil, nil, err
		}
	}
	return coef, loss, nil
}

// start finds a first vertex near the least-squares fit: the observations closest to it, taken
// in that order while each adds a new direction to the rows already taken.
func (q *quantReg) start() error {
	p := q.p
	// Least squares by the normal equations: only the order of the residuals matters here.
	xtx := make([]float64, p*p)
	xty := make([]float64, p)
	for i := 0; i < q.n; i++ {
		xi := q.row(i)
		for a := 0; a < p; a++ {
			xty[a] += xi[a] * q.y[i]
			for b := 0; b < p; b++ {
				xtx[a*p+b] += xi[a] * xi[b]
			}
		}
	}
	for a := 0; a < p; a++ {
		xtx[a*p+a] *= 1 + 1e-12 // a touch of ridge keeps a dependent design solvable here
	}
	if err := invert(xtx, p, q.work); err != nil {
		return errRankDeficient
	}
	ls := make([]float64, p)
	for a := 0; a < p; a++ {
		for b := 0; b < p; b++ {
			ls[a] += xtx[a*p+b] * xty[b]
		}
	}
	order := make([]int, q.n)
	abs := make([]float64, q.n)
	for i := range order {
		order[i] = i
		abs[i] = math.Abs(q.y[i] - dot(q.row(i), ls))
	}
	sort.SliceStable(order, func(a, b int) bool { return abs[order[a]] < abs[order[b]] })
	// Gram–Schmidt on the rows taken: a row whose part outside their span is tiny adds nothing.
	ortho := make([][]float64, 0, p)
	picked := make([]int, 0, p)
	v := make([]float64, p)
	for _, i := range order {
		copy(v, q.row(i))
		norm0 := math.Sqrt(dot(v, v))
		for _, o := range ortho {
			c := dot(v, o)
			for k := range v {
				v[k] -= c * o[k]
			}
		}
		norm := math.Sqrt(dot(v, v))
		if norm0 == 0 || norm < 1e-7*norm0 {
			continue
		}
		o := make([]float64, p)
		for k := range v {
			o[k] = v[k] / norm
		}
		ortho = append(ortho, o)
		picked = append(picked, i)
		if len(picked) == p {
			return q.setBasis(picked)
		}
	}
	return errRankDeficient
}

// setBasis makes basis the vertex: its inverse, β and every residual.
func (q *quantReg) setBasis(basis []int) error {
	for _, i := range q.basis {
		q.inBasis[i] = false
	}
	q.basis = append(q.basis[:0], basis...)
	for _, i := range q.basis {
		q.inBasis[i] = true
	}
	return q.refresh()
}

// refresh recomputes the inverse of the basis rows, β and the residuals from the data.
func (q *quantReg) refresh() error {
	if err := q.factor(); err != nil {
		return err
	}
	for i := 0; i < q.n; i++ {
		if q.inBasis[i] {
			q.r[i] = 0
			continue
		}
		q.r[i] = q.y[i] - dot(q.row(i), q.beta)
	}
	return nil
}

// factor recomputes the inverse of the basis rows and β.
func (q *quantReg) factor() error {
	p := q.p
	for j, i := range q.basis {
		copy(q.binv[j*p:(j+1)*p], q.row(i))
	}
	if err := invert(q.binv, p, q.work); err != nil {
		return errRankDeficient
	}
	// β = B⁻¹ y_B, where row j of B is observation basis[j].
	for a := 0; a < p; a++ {
		s := 0.0
		for j, i := range q.basis {
			s += q.binv[a*p+j] * q.y[i]
		}
		q.beta[a] = s
	}
	return nil
}

// unperturbed returns the coefficients of the current basis on the measures as given, and their
// check loss.
func (q *quantReg) unperturbed(tau float64) ([]float64, float64) {
	p := q.p
	beta := make([]float64, p)
	for a := 0; a < p; a++ {
		for j, i := range q.basis {
			beta[a] += q.binv[a*p+j] * q.y0[i]
		}
	}
	s := 0.0
	for i := 0; i < q.n; i++ {
		s += check(q.y0[i]-dot(q.row(i), beta), tau)
	}
	return beta, s
}

// check is the check loss ρ_τ(u) = u·(τ − [u < 0]).
func check(u, tau float64) float64 {
	if u < 0 {
		return u * (tau - 1)
	}
	return u * tau
}

func dot(a, b []float64) float64 {
	s := 0.0
	for k, v := range a {
		s += v * b[k]
	}
	return s
}

// invert inverts the p×p row-major matrix m in place by Gauss–Jordan elimination with partial
// pivoting; work holds at least 2p² values.
func invert(m []float64, p int, work []float64) error {
	aug := work[:2*p*p]
	w := 2 * p
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			aug[i*w+j] = m[i*p+j]
			aug[i*w+p+j] = 0
		}
		aug[i*w+p+i] = 1
	}
	for c := 0; c < p; c++ {
		piv, best := c, math.Abs(aug[c*w+c])
		for i := c + 1; i < p; i++ {
			if v := math.Abs(aug[i*w+c]); v > best {
				piv, best = i, v
			}
		}
		if best < 1e-13 {
			return errRankDeficient
		}
		if piv != c {
			for j := 0; j < w; j++ {
				aug[c*w+j], aug[piv*w+j] = aug[piv*w+j], aug[c*w+j]
			}
		}
		inv := 1 / aug[c*w+c]
		for j := 0; j < w; j++ {
			aug[c*w+j] *= inv
		}
		for i := 0; i < p; i++ {
			if i == c {
				continue
			}
			f := aug[i*w+c]
			if f == 0 {
				continue
			}
			for j := c; j < w; j++ {
				aug[i*w+j] -= f * aug[c*w+j]
			}
		}
	}
	for i := 0; i < p; i++ {
		copy(m[i*p:(i+1)*p], aug[i*w+p:(i+1)*w])
	}
	return nil
}
