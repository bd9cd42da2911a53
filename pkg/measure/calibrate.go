package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// CalibratedItem is one item's Rasch calibration (§10), or partial credit or rating scale
// calibration (§13), in logits.
type CalibratedItem struct {
	ID string
	// Logit is the CML difficulty (for an item scored 0 … m with m > 1, its location: the mean
	// of its steps), identified by sum zero over the calibrated items; SE is its standard error
	// (square root of the diagonal of the pseudo-inverse of the information; of the locations'
	// covariance under their sum-zero identification). In a partial credit or rating scale
	// calibration an item scored 0/1 has one step, its location, and its SE is that step's
	// (CalibratedStep.SE, under eRm's constraint), as every other step's SE in the same
	// calibration; with every item scored 0/1 the two identifications coincide.
	Logit, SE float64
	// Steps are the step difficulties δ_ik (logits, the θ at which categories k − 1 and k are
	// equally likely; on Logit's identification) of an item scored 0 … m, m > 1; nil for an
	// item scored 0/1.
	Steps []CalibratedStep
	// Infit and Outfit are the information-weighted and unweighted mean squares of the
	// standardised residuals against each person's MLE (Wright and Masters 1982); 1 is the
	// model's expectation.
	Infit, Outfit float64
	N             int // persons used who answered the item
}

// CalibratedStep is one step of a polytomous item. SE is eRm's thresholds()$se.thresh: the
// standard error under eRm's own constraint on the thresholds (METHOD §13), bᵀδ = 0 with
// b_ik = m_i − k + 1 (partial credit) or [k = 1] (rating scale), which a step's SE depends on.
type CalibratedStep struct {
	Logit, SE float64
}

// Models of Calibrate.
const (
	ModelRasch = "rasch" // the Rasch model: every cell 0/1 (§10)
	ModelPCM   = "pcm"   // the partial credit model: item i scored 0 … m_i (§13)
	ModelRSM   = "rsm"   // the rating scale model: every item scored 0 … m, one step structure (§13)
)

// DroppedItem is an item without a finite estimate, and why.
type DroppedItem struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Calibration is the result of Calibrate.
type Calibration struct {
	Model      string           // ModelRasch, ModelPCM or ModelRSM
	Items      []CalibratedItem // in column order, dropped items left out
	Dropped    []DroppedItem    // in the order they were found
	Persons    int              // persons used: those with neither a zero nor a perfect score on the kept items
	Iterations int              // Newton iterations
	// Cov is the covariance of the logits (Items order, row-major): the Moore–Penrose
	// pseudo-inverse of the information matrix, of rank len(Items) − 1. For a polytomous model,
	// that of the locations under their sum-zero identification (the same matrix for items
	// scored 0/1).
	Cov []float64
}

// CalibrateProgress reports one finished Newton iteration.
type CalibrateProgress struct {
	Iteration int
	MaxChange float64 // largest change of a difficulty in this iteration, logits
}

// CalibrateOptions tunes Calibrate; the zero value is the default.
type CalibrateOptions struct {
	// Model is ModelRasch, ModelPCM or ModelRSM; "" is ModelRasch when every cell is 0, 1 or
	// Missing, else ModelPCM.
	Model string
	// Progress, when set, is called after every Newton iteration (on the calling goroutine).
	Progress func(CalibrateProgress)
}

// Calibration limits.
const (
	calibrateTolerance = 1e-10 // stop when no difficulty moves more than this, logits
	calibrateMaxIter   = 100
)

// Calibrate estimates Rasch item difficulties from a response matrix by conditional maximum
// likelihood (§10): each person's ability is conditioned out through the elementary symmetric
// functions of the items that person answered, so blanks need no imputation. Items answered all
// alike are dropped and named (re-checked after persons with zero or perfect scores are removed,
// until stable); a booklet design that does not connect, or data that fail Fischer's existence
// condition, return a *DesignError naming the item groups. The difficulties sum to zero; use
// Calibration.OnScale to put them on a framework's scale.
//
// Cells above 1 are scores of items in more than two categories: the partial credit or rating
// scale model (§13, calibratePolytomous); a file of 0/1 cells takes the Rasch path below, as it
// always has.
func Calibrate(ctx context.Context, resp *Responses, opts CalibrateOptions) (*Calibration, error) {
	if err := resp.validate(); err != nil {
		return nil, err
	}
	model, err := resp.model(opts.Model)
	if err != nil {
		return nil, err
	}
	if model != ModelRasch {
		return calibratePolytomous(ctx, resp, model, opts)
	}
	d := prune(resp)
	kept := d.keptItems()
	if len(kept) < 2 {
		return nil, fmt.Errorf("only %d of %d items can be estimated (%s); a calibration needs at least 2",
			len(kept), len(resp.Items), droppedSummary(d.dropped))
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	est := newEstimation(d, kept)
	iters, err := est.newton(ctx, opts.Progress)
	if err != nil {
		return nil, err
	}
	cov, err := est.covariance()
	if err != nil {
		return nil, err
	}
	m := len(kept)
	cal := &Calibration{Model: ModelRasch, Dropped: d.dropped, Persons: est.persons, Iterations: iters, Cov: cov}
	infit, outfit, n := est.fit()
	for k, i := range kept {
		cal.Items = append(cal.Items, CalibratedItem{
			ID: resp.Items[i], Logit: est.beta[k], SE: math.Sqrt(cov[k*m+k]),
			Infit: infit[k], Outfit: outfit[k], N: n[k],
		})
	}
	return cal, nil
}

func (r *Responses) validate() error {
	if r == nil || len(r.Items) < 2 {
		return errors.New("calibrate: a response matrix needs at least 2 items")
	}
	for p, row := range r.Cells {
		if len(row) != len(r.Items) {
			return fmt.Errorf("calibrate: person %d has %d cells; want %d (one per item)", p, len(row), len(r.Items))
		}
		for i, x := range row {
			if x != Missing && (x < 0 || x > MaxCellScore) {
				return fmt.Errorf("calibrate: person %d item %s: response %d is not a score 0 … %d or Missing", p, r.Items[i], x, MaxCellScore)
			}
		}
	}
	if len(r.Persons) != 0 && len(r.Persons) != len(r.Cells) {
		return fmt.Errorf("calibrate: %d person ids for %d rows", len(r.Persons), len(r.Cells))
	}
	return nil
}

// model resolves the model asked for ("" chooses by the cells); the Rasch model refuses a cell
// above 1, naming the first.
func (r *Responses) model(asked string) (string, error) {
	high, firstP, firstI := int8(0), 0, 0 // the highest cell, and where the first above 1 is
	for p, row := range r.Cells {
		for i, x := range row {
			if x > 1 && high <= 1 {
				firstP, firstI = p, i
			}
			high = max(high, x)
		}
	}
	switch asked {
	case "":
		if high > 1 {
			return ModelPCM, nil
		}
		return ModelRasch, nil
	case ModelRasch:
		if high > 1 {
			return "", fmt.Errorf("calibrate: the Rasch model takes 0/1 responses, and %s scored %d on item %s; use the partial credit (pcm) or rating scale (rsm) model",
				r.personName(firstP), r.Cells[firstP][firstI], r.Items[firstI])
		}
		return ModelRasch, nil
	case ModelPCM, ModelRSM:
		return asked, nil
	}
	return "", fmt.Errorf("calibrate: model %q; want %s, %s or %s", asked, ModelRasch, ModelPCM, ModelRSM)
}

func (r *Responses) personName(p int) string {
	if len(r.Persons) > p {
		return "person " + r.Persons[p]
	}
	return fmt.Sprintf("person %d", p)
}

func droppedSummary(ds []DroppedItem) string {
	if len(ds) == 0 {
		return "none dropped"
	}
	s := ""
	for i, d := range ds {
		if i == 5 {
			s += fmt.Sprintf("; and %d more", len(ds)-5)
			break
		}
		if i > 0 {
			s += "; "
		}
		s += d.ID + ": " + d.Reason
	}
	return s
}

// estimation holds the sufficient statistics of the kept data and the current difficulties.
type estimation struct {
	d        *design
	kept     []int     // response column of each compact item
	col      []int     // compact index of each response column, −1 if dropped
	booklets []booklet // persons grouped by the set of kept items they answered
	of       []int     // booklet of each person, −1 if not used
	score    []int     // raw score of each used person on the kept items
	right    []float64 // s_i: right answers of used persons per compact item
	persons  int
	beta     []float64
	work     esfWork
}

func newEstimation(d *design, kept []int) *estimation {
	resp := d.resp
	m := len(kept)
	e := &estimation{d: d, kept: kept, col: make([]int, len(resp.Items)), right: make([]float64, m),
		of: make([]int, len(resp.Cells)), score: make([]int, len(resp.Cells))}
	for i := range e.col {
		e.col[i] = -1
	}
	for k, i := range kept {
		e.col[i] = k
	}
	index := map[string]int{}
	key := make([]byte, (m+7)/8)
	wrong := make([]float64, m)
	for p, row := range resp.Cells {
		e.of[p] = -1
		if !d.keepPerson[p] {
			continue
		}
		clear(key)
		score := 0
		for i, x := range row {
			k := e.col[i]
			if x == Missing || k < 0 {
				continue
			}
			key[k/8] |= 1 << (k % 8)
			score += int(x)
			if x == 1 {
				e.right[k]++
			} else {
				wrong[k]++
			}
		}
		b, ok := index[string(key)]
		if !ok {
			b = len(e.booklets)
			index[string(key)] = b
			var items []int
			for k := 0; k < m; k++ {
				if key[k/8]&(1<<(k%8)) != 0 {
					items = append(items, k)
				}
			}
			e.booklets = append(e.booklets, booklet{items: items, n: make([]float64, len(items)+1)})
		}
		e.booklets[b].n[score]++
		e.of[p], e.score[p] = b, score
		e.persons++
	}
	// Start from the log-odds of a wrong answer, centred: close to the answer for balanced
	// designs, and any start converges (the conditional likelihood is concave).
	e.beta = make([]float64, m)
	for k := range e.beta {
		e.beta[k] = math.Log(wrong[k] / e.right[k])
	}
	centre(e.beta)
	return e
}

func centre(v []float64) {
	mean := 0.0
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for k := range v {
		v[k] -= mean
	}
}

// objective is −(conditional log-likelihood) = Σ_i s_i β_i + Σ_booklets Σ_r n_r log γ_r.
func (e *estimation) objective(beta []float64) (float64, error) {
	f := 0.0
	for k, s := range e.right {
		f += s * beta[k]
	}
	for b := range e.booklets {
		ll, err := e.work.loglik(&e.booklets[b], beta)
		if err != nil {
			return 0, err
		}
		f += ll
	}
	return f, nil
}

// derivatives returns the objective, its gradient s − E (E the expected item scores) and its
// Hessian, the information matrix (m × m, row-major).
func (e *estimation) derivatives(ctx context.Context, beta []float64) (float64, []float64, []float64, error) {
	m := len(beta)
	exp := make([]float64, m)
	info := make([]float64, m*m)
	f := 0.0
	for k, s := range e.right {
		f += s * beta[k]
	}
	for b := range e.booklets {
		if b%256 == 255 {
			if err := ctx.Err(); err != nil {
				return 0, nil, nil, err
			}
		}
		ll, err := e.work.accumulate(&e.booklets[b], beta, exp, info, m)
		if err != nil {
			return 0, nil, nil, err
		}
		f += ll
	}
	grad := make([]float64, m)
	for k := range grad {
		grad[k] = e.right[k] - exp[k]
	}
	return f, grad, info, nil
}

// newton minimises the objective by Newton's method on the sum-zero subspace, halving a step
// that does not lower it. The information I has the null vector 1 (a common shift of every
// difficulty changes nothing); I + a·11ᵀ is positive definite for a connected design, and since
// the gradient sums to zero the solution of (I + a·11ᵀ)Δ = −g is the sum-zero Newton step.
func (e *estimation) newton(ctx context.Context, progress func(CalibrateProgress)) (int, error) {
	m := len(e.beta)
	trial := make([]float64, m)
	for iter := 1; iter <= calibrateMaxIter; iter++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		f, grad, info, err := e.derivatives(ctx, e.beta)
		if err != nil {
			return 0, err
		}
		step, err := solveShifted(info, grad, m)
		if err != nil {
			return 0, err
		}
		for k := range step {
			step[k] = -step[k]
		}
		change := 0.0
		for t := 0; ; t++ {
			for k := range trial {
				trial[k] = e.beta[k] + step[k]
			}
			ft, err := e.objective(trial)
			if err == nil && ft <= f+1e-12*math.Abs(f) {
				break
			}
			if t == 40 {
				return 0, errors.New("calibrate: Newton step failed to lower the objective")
			}
			for k := range step {
				step[k] /= 2
			}
		}
		for k := range step {
			change = max(change, math.Abs(step[k]))
		}
		copy(e.beta, trial)
		centre(e.beta)
		if progress != nil {
			progress(CalibrateProgress{Iteration: iter, MaxChange: change})
		}
		if change < calibrateTolerance {
			return iter, nil
		}
	}
	return 0, fmt.Errorf("calibrate: no convergence in %d Newton iterations", calibrateMaxIter)
}

// solveShifted solves (I + a·11ᵀ)x = g by Cholesky, a = trace(I)/m², so that the added
// eigenvalue along 1 is the mean diagonal and the system stays well conditioned.
func solveShifted(info, g []float64, m int) ([]float64, error) {
	var ch mat.Cholesky
	if err := factorShifted(&ch, info, m); err != nil {
		return nil, err
	}
	x := mat.NewVecDense(m, nil)
	if err := ch.SolveVecTo(x, mat.NewVecDense(m, slices.Clone(g))); err != nil {
		return nil, fmt.Errorf("calibrate: solve for the Newton step: %w", err)
	}
	return x.RawVector().Data, nil
}

func factorShifted(ch *mat.Cholesky, info []float64, m int) error {
	a := shift(info, m)
	s := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			s.SetSym(i, j, 0.5*(info[i*m+j]+info[j*m+i])+a)
		}
	}
	if ok := ch.Factorize(s); !ok {
		return errors.New("calibrate: the information matrix is singular beyond the common shift (the design does not determine the difficulties)")
	}
	return nil
}

func shift(info []float64, m int) float64 {
	tr := 0.0
	for i := 0; i < m; i++ {
		tr += info[i*m+i]
	}
	return tr / float64(m*m)
}

// covariance returns the Moore–Penrose pseudo-inverse of the information at the estimate. With
// null vector 1 (unit u = 1/√m) the information is I = Σ λ v vᵀ over 1⊥, I + a·11ᵀ adds the
// eigenvalue a·m along u, so pinv(I) = (I + a·11ᵀ)⁻¹ − 11ᵀ/(a·m²).
func (e *estimation) covariance() ([]float64, error) {
	m := len(e.beta)
	_, _, info, err := e.derivatives(context.Background(), e.beta)
	if err != nil {
		return nil, err
	}
	var ch mat.Cholesky
	if err := factorShifted(&ch, info, m); err != nil {
		return nil, err
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return nil, fmt.Errorf("calibrate: invert the information: %w", err)
	}
	a := shift(info, m)
	corr := 1 / (a * float64(m) * float64(m))
	cov := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			cov[i*m+j] = inv.At(i, j) - corr
		}
	}
	return cov, nil
}
