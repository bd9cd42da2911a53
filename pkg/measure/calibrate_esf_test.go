package measure

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

// bruteBooklet computes a booklet's Σ n_r log γ_r, expected item scores and information by
// enumerating every response pattern: γ_r = Σ over patterns with r right of Π ε_i, and the
// conditional moments P(x_i = 1 | r), P(x_i = x_j = 1 | r) as weighted pattern counts. It is
// exponential in k and shares nothing with the ESF recursions.
func bruteBooklet(b *booklet, beta []float64, m int) (ll float64, exp, info []float64) {
	k := len(b.items)
	exp, info = make([]float64, m), make([]float64, m*m)
	gamma := make([]float64, k+1)
	p1 := make([][]float64, k+1)
	p2 := make([][]float64, k+1)
	for r := range p1 {
		p1[r], p2[r] = make([]float64, k), make([]float64, k*k)
	}
	for mask := 0; mask < 1<<k; mask++ {
		w := 1.0
		for l := 0; l < k; l++ {
			if mask&(1<<l) != 0 {
				w *= math.Exp(-beta[b.items[l]])
			}
		}
		r := bits.OnesCount(uint(mask))
		gamma[r] += w
		for l := 0; l < k; l++ {
			if mask&(1<<l) == 0 {
				continue
			}
			p1[r][l] += w
			for j := 0; j < k; j++ {
				if mask&(1<<j) != 0 {
					p2[r][l*k+j] += w
				}
			}
		}
	}
	for r := 1; r < k; r++ {
		n := b.n[r]
		if n == 0 {
			continue
		}
		ll += n * math.Log(gamma[r])
		for l := 0; l < k; l++ {
			pl := p1[r][l] / gamma[r]
			exp[b.items[l]] += n * pl
			for j := 0; j < k; j++ {
				pj := p1[r][j] / gamma[r]
				cov := p2[r][l*k+j]/gamma[r] - pl*pj
				info[b.items[l]*m+b.items[j]] += n * cov
			}
		}
	}
	return ll, exp, info
}

func TestESFMatchesEnumeration(t *testing.T) {
	t.Parallel()
	for seed, c := range []struct {
		name   string
		m      int     // items in the calibration
		spread float64 // difficulties uniform in ±spread logits
	}{
		{"2 items", 2, 1},
		{"3 items", 3, 2},
		{"8 items", 8, 2},
		{"12 items, wide", 12, 6},
		{"12 items, one far out", 12, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(seed), 2)) // one per subtest: they run in parallel
			beta := make([]float64, c.m)
			for i := range beta {
				beta[i] = c.spread * (2*rng.Float64() - 1)
			}
			if c.spread == 0 {
				beta[3] = 9
			}
			var w esfWork
			for trial := 0; trial < 6; trial++ {
				// A random subset (the booklet) with random score counts.
				var b booklet
				for i := 0; i < c.m; i++ {
					if trial == 0 || rng.IntN(3) > 0 {
						b.items = append(b.items, i)
					}
				}
				if len(b.items) < 2 {
					b.items = []int{0, c.m - 1}
				}
				b.n = make([]float64, len(b.items)+1)
				for r := 1; r < len(b.items); r++ {
					b.n[r] = float64(rng.IntN(5))
				}
				wantLL, wantExp, wantInfo := bruteBooklet(&b, beta, c.m)
				exp, info := make([]float64, c.m), make([]float64, c.m*c.m)
				ll, err := w.accumulate(&b, beta, exp, info, c.m)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(ll-wantLL) > 1e-9*math.Max(1, math.Abs(wantLL)) {
					t.Errorf("booklet %v: Σ n log γ = %v; want %v", b.items, ll, wantLL)
				}
				only, err := w.loglik(&b, beta)
				if err != nil || math.Abs(only-wantLL) > 1e-9*math.Max(1, math.Abs(wantLL)) {
					t.Errorf("booklet %v: loglik = %v, %v; want %v", b.items, only, err, wantLL)
				}
				for i := range exp {
					if math.Abs(exp[i]-wantExp[i]) > 1e-10*math.Max(1, wantExp[i]) {
						t.Errorf("booklet %v: E[x_%d] = %v; want %v", b.items, i, exp[i], wantExp[i])
					}
				}
				for i := range info {
					if math.Abs(info[i]-wantInfo[i]) > 1e-10 {
						t.Errorf("booklet %v: info[%d,%d] = %v; want %v", b.items, i/c.m, i%c.m, info[i], wantInfo[i])
					}
				}
			}
		})
	}
}

// TestESFOverflowIsAnError: a booklet of 600 items spread over ±12 logits has symmetric
// functions beyond the float64 range even after centring; that is an error, never a NaN estimate.
// 300 items over ±3 logits still fit.
func TestESFOverflowIsAnError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		k      int
		spread float64
		fails  bool
	}{{600, 12, true}, {300, 3, false}} {
		t.Run(fmt.Sprintf("%d items ±%v", c.k, c.spread), func(t *testing.T) {
			t.Parallel()
			beta := make([]float64, c.k)
			b := booklet{items: make([]int, c.k), n: make([]float64, c.k+1)}
			for i := range beta {
				beta[i] = c.spread * (2*float64(i)/float64(c.k-1) - 1)
				b.items[i] = i
			}
			b.n[c.k/2] = 1
			var w esfWork
			_, errL := w.loglik(&b, beta)
			_, errA := w.accumulate(&b, beta, make([]float64, c.k), make([]float64, c.k*c.k), c.k)
			for _, err := range []error{errL, errA} {
				if c.fails != (err != nil) || (err != nil && !strings.Contains(err.Error(), "booklet of 600 items overflow")) {
					t.Errorf("got %v; want an overflow error: %v", err, c.fails)
				}
			}
		})
	}
}
