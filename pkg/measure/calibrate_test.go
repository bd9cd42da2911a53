package measure

import (
	"context"
	"encoding/csv"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// ermRow is one item of an eRm reference file (testdata/calibrate/*.erm.csv, written by erm.R).
type ermRow struct {
	id                       string
	logit, se, infit, outfit float64
}

func readERm(t *testing.T, name string) []ermRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "calibrate", name+".erm.csv"))
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(strings.NewReader(string(data)))
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "item,logit,se,infit,outfit" {
		t.Fatalf("header %q", got)
	}
	var rows []ermRow
	for _, rec := range recs[1:] {
		v := make([]float64, 4)
		for j := range v {
			if v[j], err = strconv.ParseFloat(rec[j+1], 64); err != nil {
				t.Fatal(err)
			}
		}
		rows = append(rows, ermRow{rec[0], v[0], v[1], v[2], v[3]})
	}
	return rows
}

// TestCalibrateMatchesERm compares with R's eRm (RM, sum0) on three simulated data sets with
// 35–60% blank cells: 24 items in 3 overlapping booklets (plus 2% random blanks), 12 items with
// 35% of the cells blank at random (nearly every person a pattern of their own), and 50 items in
// 5 booklets of 20. Difficulties, SEs and the fit mean squares agree within 1e-4. Where they
// differ, eRm stopped early: its optimiser (nlm, numerical gradient) ends with gradients up to
// 6e-3 while ours are below 1e-9, and our conditional log-likelihood is the higher.
func TestCalibrateMatchesERm(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"booklets", "random", "wide"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp := readResponsesFile(t, name+".csv")
			blank, cells := 0, 0
			for _, row := range resp.Cells {
				for _, x := range row {
					cells++
					if x == Missing {
						blank++
					}
				}
			}
			if frac := float64(blank) / float64(cells); frac < 0.30 {
				t.Fatalf("%.1f%% blank; the reference sets must have at least 30%%", 100*frac)
			}
			cal, err := Calibrate(context.Background(), resp, CalibrateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := readERm(t, name)
			if len(cal.Items) != len(want) || len(cal.Dropped) != 0 {
				t.Fatalf("got %d items, dropped %v; want eRm's %d items", len(cal.Items), cal.Dropped, len(want))
			}
			const tol = 1e-4
			ours := make([]float64, len(want))
			theirs := make([]float64, len(want))
			for k, w := range want {
				got := cal.Items[k]
				ours[k], theirs[k] = got.Logit, w.logit
				for _, c := range []struct {
					what      string
					got, want float64
				}{
					{"logit", got.Logit, w.logit}, {"se", got.SE, w.se}, {"infit", got.Infit, w.infit}, {"outfit", got.Outfit, w.outfit},
				} {
					if got.ID != w.id || math.Abs(c.got-c.want) > tol {
						t.Errorf("%s %s: got %.8f; want eRm's %.8f (±%v)", w.id, c.what, c.got, c.want, tol)
					}
				}
			}
			// Our estimate is the better optimum of the same conditional likelihood.
			est := newEstimation(prune(resp), prune(resp).keptItems())
			fOurs, gOurs, _, err := est.derivatives(context.Background(), ours)
			if err != nil {
				t.Fatal(err)
			}
			fTheirs, _, _, err := est.derivatives(context.Background(), theirs)
			if err != nil {
				t.Fatal(err)
			}
			if fOurs > fTheirs {
				t.Errorf("−log L at our estimate %v is above eRm's %v", fOurs, fTheirs)
			}
			for k, g := range gOurs {
				if math.Abs(g) > 1e-9 {
					t.Errorf("gradient %d at our estimate = %v; want 0", k, g)
				}
			}
		})
	}
}

// TestCalibrateRecovery: data simulated from known difficulties (centred to sum zero) in 40
// seeded replications of 600 persons × 20 items in 4 overlapping booklets of 10; the pooled
// share of the 800 intervals logit ± 1.96·SE that hold the true difficulty is 93–97%.
func TestCalibrateRecovery(t *testing.T) {
	t.Parallel()
	const reps, items = 40, 20
	covered, total := 0, 0
	for rep := 0; rep < reps; rep++ {
		rng := rand.New(rand.NewPCG(uint64(rep), 2026))
		beta := make([]float64, items)
		for i := range beta {
			beta[i] = -2 + 4*rng.Float64()
		}
		centre(beta)
		resp := simulate(rng, 600, beta, 0.3, 1.2, cyclicBooklets(items, 4))
		cal, err := Calibrate(context.Background(), resp, CalibrateOptions{})
		if err != nil {
			t.Fatalf("replication %d: %v", rep, err)
		}
		if len(cal.Items) != items {
			t.Fatalf("replication %d: %d items calibrated, dropped %v", rep, len(cal.Items), cal.Dropped)
		}
		sum := 0.0
		for k, it := range cal.Items {
			sum += it.Logit
			total++
			if math.Abs(it.Logit-beta[k]) <= 1.96*it.SE {
				covered++
			}
		}
		if math.Abs(sum) > 1e-9 {
			t.Errorf("replication %d: logits sum to %v; want 0", rep, sum)
		}
	}
	if share := float64(covered) / float64(total); share < 0.93 || share > 0.97 {
		t.Errorf("%d of %d intervals (%.3f) hold the true difficulty; want 0.93–0.97", covered, total, share)
	} else {
		t.Logf("coverage %.4f (%d of %d)", share, covered, total)
	}
}

// TestCalibrateDropsItems: items without a finite estimate are named with the reason and left
// out, re-checked after persons with zero or perfect scores are removed, until stable.
func TestCalibrateDropsItems(t *testing.T) {
	t.Parallel()
	ids := []string{"A", "B", "C", "EMPTY", "ALLRIGHT", "ALLWRONG", "EXTREME", "LATER"}
	resp := fromRows(ids,
		// A B C EMPTY  ALLRIGHT ALLWRONG EXTREME LATER
		"10.."+"10.1",
		"01.."+"10.1",
		"110."+"10.1",
		"011."+"10.1",
		"101."+"10..",
		"100."+"10..",
		"...."+"1..0", // not extreme until ALLRIGHT goes: then zero, and LATER is all right
		"...."+"1.1.", // perfect: removed in the first pass
		"...."+".00.", // zero: removed in the first pass, so EXTREME is left with nobody
	)
	cal, err := Calibrate(context.Background(), resp, CalibrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []DroppedItem{
		{"EMPTY", "not answered by anyone"},
		{"ALLRIGHT", "answered correctly by all 8 persons who took it"},
		{"ALLWRONG", "answered wrongly by all 7 persons who took it"},
		{"EXTREME", "answered only by persons with zero or perfect scores"},
		{"LATER", "answered correctly by all 4 persons who took it once those with zero or perfect scores are left out"},
	}
	if !reflect.DeepEqual(cal.Dropped, want) {
		t.Errorf("dropped:\n got %v\nwant %v", cal.Dropped, want)
	}
	var got []string
	for _, it := range cal.Items {
		got = append(got, it.ID)
	}
	if !reflect.DeepEqual(got, []string{"A", "B", "C"}) || cal.Persons != 6 {
		t.Errorf("calibrated %v from %d persons; want [A B C] from 6", got, cal.Persons)
	}
	for k, n := range []int{6, 6, 4} { // C was taken by persons 3–6 only
		if cal.Items[k].N != n {
			t.Errorf("%s: n = %d; want %d", cal.Items[k].ID, cal.Items[k].N, n)
		}
	}
	// Too little left: an error that names what was dropped.
	_, err = Calibrate(context.Background(), fromRows([]string{"A", "B"}, "11", "10", "10"), CalibrateOptions{})
	if err == nil || !strings.Contains(err.Error(), "only 0 of 2 items") || !strings.Contains(err.Error(), "A: answered correctly by all 3") {
		t.Errorf("got %v; want an error naming A and B", err)
	}
}

func TestCalibrateDesignErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		resp   *Responses
		reason string
		parts  [][]string
	}{
		{
			"disconnected booklets",
			fromRows([]string{"A", "B", "C", "D", "E", "F"},
				"10....", "01....", "1.0...", ".01...", // booklet 1: A B C
				"...10.", "...01.", "...1.0", "....01"), // booklet 2: D E F
			"the booklet design does not connect",
			[][]string{{"A", "B", "C"}, {"D", "E", "F"}},
		},
		{
			// Whoever got A or B wrong got C and D wrong too: C and D could be infinitely hard.
			"Fischer's condition",
			fromRows([]string{"A", "B", "C", "D"}, "1000", "0100", "1110", "1101"),
			"Fischer's condition",
			[][]string{{"A", "B"}, {"C", "D"}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Calibrate(context.Background(), c.resp, CalibrateOptions{})
			var de *DesignError
			if !errors.As(err, &de) {
				t.Fatalf("got %v; want a *DesignError", err)
			}
			if !strings.Contains(de.Reason, c.reason) || !reflect.DeepEqual(de.Components, c.parts) {
				t.Errorf("got %q %v; want %q %v", de.Reason, de.Components, c.reason, c.parts)
			}
			if !strings.Contains(err.Error(), "{A, B") {
				t.Errorf("message %q does not list the components", err)
			}
		})
	}
}

// TestCovarianceIsPseudoInverse: Cov equals the Moore–Penrose pseudo-inverse of the information
// computed by SVD (gonum), is symmetric, and annihilates the common shift.
func TestCovarianceIsPseudoInverse(t *testing.T) {
	t.Parallel()
	resp := readResponsesFile(t, "booklets.csv")
	cal, err := Calibrate(context.Background(), resp, CalibrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := len(cal.Items)
	beta := make([]float64, m)
	for k, it := range cal.Items {
		beta[k] = it.Logit
	}
	d := prune(resp)
	_, _, info, err := newEstimation(d, d.keptItems()).derivatives(context.Background(), beta)
	if err != nil {
		t.Fatal(err)
	}
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(m, m, info), mat.SVDFull) {
		t.Fatal("SVD failed")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	vals := svd.Values(nil)
	pinv := mat.NewDense(m, m, nil)
	for k, s := range vals {
		if s < 1e-9*vals[0] {
			continue // the null direction 1
		}
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				pinv.Set(i, j, pinv.At(i, j)+v.At(i, k)*u.At(j, k)/s)
			}
		}
	}
	for i := 0; i < m; i++ {
		row := 0.0
		for j := 0; j < m; j++ {
			row += cal.Cov[i*m+j]
			if d := math.Abs(cal.Cov[i*m+j] - pinv.At(i, j)); d > 1e-12 {
				t.Errorf("Cov[%d,%d] = %v; pinv %v", i, j, cal.Cov[i*m+j], pinv.At(i, j))
			}
			if cal.Cov[i*m+j] != cal.Cov[j*m+i] {
				t.Errorf("Cov not symmetric at %d,%d", i, j)
			}
		}
		if math.Abs(row) > 1e-12 {
			t.Errorf("row %d of Cov sums to %v; want 0 (the sum-zero covariance)", i, row)
		}
	}
}

// TestCalibrateInvariance: the estimate depends on the data, not on their order; doubling every
// person doubles the information (same logits, SEs divided by √2, fit unchanged).
func TestCalibrateInvariance(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	beta := []float64{-1.5, -1, -0.4, 0, 0.3, 0.8, 1.1, 1.6}
	resp := simulate(rng, 300, beta, 0, 1, func(p, i int) bool { return rng.IntN(10) < 7 })
	base, err := Calibrate(context.Background(), resp, CalibrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shuffled := &Responses{Items: resp.Items, Persons: resp.Persons, Cells: append([][]int8(nil), resp.Cells...)}
	rng.Shuffle(len(shuffled.Cells), func(i, j int) { shuffled.Cells[i], shuffled.Cells[j] = shuffled.Cells[j], shuffled.Cells[i] })
	doubled := &Responses{Items: resp.Items, Cells: append(append([][]int8(nil), resp.Cells...), resp.Cells...)}
	for _, c := range []struct {
		name  string
		resp  *Responses
		ratio float64
	}{{"shuffled", shuffled, 1}, {"doubled", doubled, math.Sqrt2}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := Calibrate(context.Background(), c.resp, CalibrateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k, it := range got.Items {
				b := base.Items[k]
				if math.Abs(it.Logit-b.Logit) > 1e-9 || math.Abs(it.SE*c.ratio-b.SE) > 1e-9 ||
					math.Abs(it.Infit-b.Infit) > 1e-9 || math.Abs(it.Outfit-b.Outfit) > 1e-9 {
					t.Errorf("%s: got %+v; want %+v with SE/%v", it.ID, it, b, c.ratio)
				}
			}
		})
	}
}

func TestCalibrateProgressAndCancel(t *testing.T) {
	t.Parallel()
	resp := readResponsesFile(t, "random.csv")
	var seen []CalibrateProgress
	cal, err := Calibrate(context.Background(), resp, CalibrateOptions{Progress: func(p CalibrateProgress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != cal.Iterations || seen[len(seen)-1].Iteration != cal.Iterations || seen[len(seen)-1].MaxChange >= calibrateTolerance {
		t.Errorf("progress %v for %d iterations; want one report per iteration, the last below tolerance", seen, cal.Iterations)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Calibrate(ctx, resp, CalibrateOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v; want context.Canceled", err)
	}
}

// TestCalibrateTwoItems: the smallest calibration has a closed form. Conditional on one right
// answer out of A and B, P(A right) = ε_A/(ε_A + ε_B); A right twice and B once gives
// ε_A/ε_B = 2, so β_B − β_A = ln 2, and sum zero puts them at ∓ ln 2 / 2.
func TestCalibrateTwoItems(t *testing.T) {
	t.Parallel()
	cal, err := Calibrate(context.Background(), fromRows([]string{"A", "B"}, "10", "01", "10", "11", "00"), CalibrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := math.Ln2 / 2
	if a, b := cal.Items[0], cal.Items[1]; math.Abs(a.Logit+want) > 1e-10 || math.Abs(b.Logit-want) > 1e-10 || cal.Persons != 3 {
		t.Errorf("got %+v, %+v from %d persons; want logits ∓%v from 3", a, b, cal.Persons, want)
	}
	// Information: 3 persons with r = 1, each Var(x_A | r = 1) = 2/9; on the sum-zero line the
	// variance of β_A is 1/(4·3·2/9) = 3/8.
	if se := cal.Items[0].SE; math.Abs(se-math.Sqrt(3.0/8)) > 1e-10 {
		t.Errorf("SE %v; want √(3/8)", se)
	}
}

func TestCalibrateRejectsBadMatrix(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		resp *Responses
		want string
	}{
		{"nil", nil, "at least 2 items"},
		{"one item", fromRows([]string{"A"}, "1", "0"), "at least 2 items"},
		{"short row", &Responses{Items: []string{"A", "B"}, Cells: [][]int8{{1}}}, "person 0 has 1 cells; want 2"},
		{"cell above the highest score", &Responses{Items: []string{"A", "B"}, Cells: [][]int8{{1, 101}}}, "item B: response 101 is not a score 0 … 100 or Missing"},
		{"negative cell", &Responses{Items: []string{"A", "B"}, Cells: [][]int8{{-2, 1}}}, "item A: response -2 is not a score 0 … 100 or Missing"},
		{"ids", &Responses{Items: []string{"A", "B"}, Persons: []string{"x"}, Cells: [][]int8{{1, 0}, {0, 1}}}, "1 person ids for 2 rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := Calibrate(context.Background(), c.resp, CalibrateOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want an error containing %q", err, c.want)
			}
		})
	}
}
