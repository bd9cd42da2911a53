// Package measure is Yardstick's measurement library. It owns the method of docs/method.md — the
// rescaled Rasch model, the standard (maximum-likelihood) and Bayes (EAP) estimators, growth along
// the norm curve, linking of external scale scores, strands, forecasts and the display rules —
// and the content bundle those run on (framework parameters, item bank, link tables, forms,
// strand benchmarks and optional percentile norms), with an embedded SYNTHETIC demonstration
// bundle (Demo). It imports nothing of Yardstick's and knows nothing of gRPC or HTTP.
//
// Calibration (§10): Calibrate estimates Rasch item difficulties from a persons × items response
// matrix with blanks (ReadResponses) by conditional maximum likelihood, with standard errors from
// the pseudo-inverse of the information and infit/outfit mean squares; Calibration.OnScaleMean
// and OnScaleAnchors put them on a framework's scale; CalibrateBank and ExtendBundle turn them
// into bank items and a new content bundle. The yardstick-calibrate command (cmd/) only calls these.
//
// Interpretation (§12): Norms.Rank reads a percentile rank off the bundle's optional norms
// (BuildNorms makes them from a norming sample); PersonFit judges a response pattern at its
// estimate with the Wright & Masters infit and outfit mean squares and their Wilson–Hilferty Z
// (the same sums, fitSums, give the calibration's item fit).
//
// Adaptive testing (§11): Bank indexes a framework's items by difficulty (Bundle.Bank, NewBank);
// Bank.Next answers one step of a stateless session — the EAP after the answers, the stop rules,
// and the next item by maximum information or a target success rate, with pool, exclude,
// content balancing and seeded randomesque exposure control; Bank.Simulate runs seeded simulated
// students through it (or through a service) for the yardstick-simulate command.
//
// Partial credit (§13): an item scored 0 … m by a rubric carries its m step difficulties (Item.Steps,
// Difficulty.Steps; the bundle's optional steps column) and is measured with the partial credit
// model, whose probabilities, expected score and variance are computed in log space; Standard,
// Bayes, Strands, PersonFit and Bank.Next take any mix of dichotomous and partial credit items,
// with the raw score in points (Test.Correct, Answer.Score, Response.Score). A dichotomous item is
// the one-step case, and a test without partial credit items runs the dichotomous code unchanged.
//
// Units: every value crossing the API is in measure units (the framework's scale); the estimators work
// in logits internally (θ/s) and convert at the edges.
//
// Sufficiency: under the Rasch model (and the partial credit model, with r the total of points)
// the raw score r is a sufficient statistic for ability, so
// every response pattern with raw score r has the same likelihood up to a constant, the same MLE
// and the same posterior. A Test therefore carries only difficulties and r, and serves the
// result-pattern endpoints (TestOf) and the number-correct endpoints alike.
//
// Rounding: Display rounds half up to the nearest 5 (572.5 → 575, −572.5 → −570), clamps to the
// display caps, and shows a value < 0 as prefix + |value| + label (0 → "0L", −2.5 → "0L", −3 → "BR5L"); Round gives the
// ability and uncertainty integers, half up (floor(v + 0.5)).
//
// Libraries: gonum supplies what it does better than hand-written code and is off the hot paths:
// quad.Hermite computes the Gauss–Hermite nodes and weights once at start-up, and
// interp.FritschButland fits the monotone (PCHIP) derivatives of the norm curves once per
// framework. The per-call loops — the Newton iterations, the quadrature sums and the curve
// evaluations and inversions of a group forecast — run on our own precomputed tables, because
// gonum's general interfaces allocate or index a matrix per call and the benchmarks in README.md
// ask for microseconds per student. Normal tails use math.Erfc so small band probabilities keep
// their relative precision. Tests cross-check against gonum's distuv.Normal. Calibration solves
// its Newton steps and covariance with gonum's Cholesky (mat), once per iteration on a k × k
// matrix; its per-booklet sums are our own loops.
// The benchmarks read a thread's CPU time through golang.org/x/sys/unix's ClockGettime (a
// test-only use), so no test needs unsafe to make the system call.
//
// Errors: Standard, Bayes and Link.Measure return an error, never a panic or a NaN, for input
// they cannot handle (no items, a raw score outside [0, n] (n the maximum points), non-finite values
// or steps, difficulties more
// than 400 logits apart, a prior more than 100,000 logits away). Loading reports every content
// problem as "file:line: reason" and never returns a half-loaded bundle.
package measure
