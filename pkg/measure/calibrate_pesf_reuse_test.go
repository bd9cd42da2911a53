package measure

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPESFReusedWorkspace: a workspace carried from booklet to booklet (as calibration does, the
// joint terms leaving stale weights outside the range each booklet reads) gives every booklet
// the same answer, bit for bit, as a fresh one, whatever the scores present (one low, one high,
// a band, all), the information computed or not.
func TestPESFReusedWorkspace(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 42))
	tops := []int{3, 1, 2, 3, 3, 2, 1, 3}
	off := []int{0}
	for i, m := range tops {
		off = append(off, off[i]+m)
	}
	size := off[len(tops)]
	delta := make([]float64, size)
	for h := range delta {
		delta[h] = 1.5 * rng.NormFloat64()
	}
	var reused pesfWork
	for c := range 24 {
		var items []int
		most := 0
		for i := range tops {
			if rng.IntN(4) > 0 {
				items = append(items, i)
				most += tops[i]
			}
		}
		if len(items) < 2 {
			continue
		}
		n := make([]float64, most+1)
		switch c % 4 {
		case 0:
			n[1] = 3
		case 1:
			n[most-1] = 2
		case 2:
			for r := most / 3; r <= 2*most/3; r++ {
				n[r] = float64(1 + rng.IntN(5))
			}
		default:
			for r := range n {
				n[r] = float64(rng.IntN(4))
			}
			n[most/2]++
		}
		b := booklet{items: items, n: n}
		for _, withInfo := range []bool{true, false} {
			t.Run(fmt.Sprintf("booklet%d/info=%v", c, withInfo), func(t *testing.T) {
				var fresh pesfWork
				var infoA, infoB []float64
				if withInfo {
					infoA, infoB = make([]float64, size*size), make([]float64, size*size)
				}
				eA, eB := make([]float64, size), make([]float64, size)
				llA, errA := fresh.accumulate(&b, delta, tops, off, eA, infoA, size)
				llB, errB := reused.accumulate(&b, delta, tops, off, eB, infoB, size)
				if errA != nil || errB != nil {
					t.Fatalf("got errors %v, %v; want none", errA, errB)
				}
				if llB != llA || !slices.Equal(eB, eA) || !slices.Equal(infoB, infoA) {
					t.Errorf("got ll %v, e %v; want ll %v, e %v (a fresh workspace), information equal: %v",
						llB, eB, llA, eA, slices.Equal(infoB, infoA))
				}
			})
		}
	}
}
