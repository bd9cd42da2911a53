package measure

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSampledInformationBlocks: a sampled information takes every item's own block (its steps
// against each other) exactly, from every booklet, as the exact information has it, and the rest
// from the sample; a sample-only pass at the point of the last pass over every booklet reuses
// that pass's blocks and gives the same matrix, bit for bit, as a pass over every booklet; at
// another point it makes that pass itself.
func TestSampledInformationBlocks(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 20))
	steps := make([][]float64, 12)
	for i := range steps {
		loc := -1.5 + 3*float64(i)/11
		steps[i] = []float64{loc - 1, loc, loc + 1}
	}
	resp := simulatePCM(rng, 1500, steps, 0, 1.2, func(p, i int) bool { return rng.Float64() >= 0.4 })
	top := make([]int, len(resp.Items))
	for i := range top {
		top[i] = 3
	}
	d := pruneScores(resp, top, false)
	est := newPEstimation(d, d.keptItems(), false)
	stride := est.sampleStride()
	if stride < 2 {
		t.Fatalf("got stride %d (%d booklets); want a sample", stride, len(est.booklets))
	}
	ctx := context.Background()
	delta := slices.Clone(est.eta)
	size := len(delta)
	_, _, exact, err := est.thresholdPass(ctx, delta, hessExact, true)
	if err != nil {
		t.Fatal(err)
	}
	_, _, sampled, err := est.thresholdPass(ctx, delta, stride, true)
	if err != nil {
		t.Fatal(err)
	}
	same, other := 0.0, 0.0
	for a := range size {
		for b := range size {
			got, want := sampled[a*size+b], exact[a*size+b]
			if a/3 == b/3 {
				if math.Abs(got-want) > 1e-12*math.Abs(exact[a*size+a]) {
					t.Errorf("information[%d,%d] (one item's steps): got %.15g; want %.15g (exact)", a, b, got, want)
				}
				same = max(same, math.Abs(got-want))
			} else {
				other = max(other, math.Abs(got-want))
			}
		}
	}
	if !(other > 0) {
		t.Errorf("the joint terms of different items: got the exact ones; want a sample's")
	}
	_, _, again, err := est.thresholdPass(ctx, delta, stride, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again, sampled) {
		t.Errorf("a sample-only pass at the same point differs from the full one")
	}
	moved := slices.Clone(delta)
	for h := range moved {
		moved[h] += 0.01 * float64(h%5)
	}
	_, _, alone, err := est.thresholdPass(ctx, moved, stride, false)
	if err != nil {
		t.Fatal(err)
	}
	_, _, full, err := est.thresholdPass(ctx, moved, stride, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(alone, full) {
		t.Errorf("a sample-only pass at a new point differs from a full one there")
	}
}
