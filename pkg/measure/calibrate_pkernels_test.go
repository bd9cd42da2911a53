package measure

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPolynomialKernels: the product, the in-place product, the correlation, the shifted dot
// products and the window of a product equal their definitions (direct double sums), for every
// length of the short factor from 1 to 5 (the unrolled ones and the general loop) and long
// factors shorter and longer than it, truncated or not.
func TestPolynomialKernels(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 13))
	vec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.Float64() + 0.1
		}
		return v
	}
	near := func(t *testing.T, what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-13*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: got %.17g; want %.17g", what, got, want)
		}
	}
	for short := 1; short <= 5; short++ {
		for _, long := range []int{1, 2, 4, 9, 23} {
			t.Run(fmt.Sprintf("%d×%d", long, short), func(t *testing.T) {
				t.Parallel()
				a, b := vec(long), vec(short)
				full := make([]float64, long+short-1)
				for i, x := range a {
					for j, y := range b {
						full[i+j] += x * y
					}
				}
				for _, lim := range []int{len(full) - 1, len(full) / 2, 0} {
					got := multiply(nil, a, b, lim)
					if len(got) != lim+1 {
						t.Fatalf("multiply to degree %d: got %d coefficients; want %d", lim, len(got), lim+1)
					}
					for x := range got {
						near(t, fmt.Sprintf("multiply[%d] (lim %d)", x, lim), got[x], full[x])
					}
				}
				q := make([]float64, len(full))
				copy(q, a)
				timesInPlace(q, b)
				for x := range q {
					near(t, fmt.Sprintf("timesInPlace[%d]", x), q[x], full[x])
				}
				src := vec(long + short - 1)
				dst := make([]float64, long)
				correlate(dst, src, b)
				for x := range dst {
					want := 0.0
					for h, y := range b {
						want += y * src[x+h]
					}
					near(t, fmt.Sprintf("correlate[%d]", x), dst[x], want)
				}
				out := make([]float64, short)
				dots(out, a, src)
				for s := range out {
					want := 0.0
					for x, y := range a {
						want += y * src[x+s]
					}
					near(t, fmt.Sprintf("dots[%d]", s), out[s], want)
				}
				suf := vec(long + 2)
				prod := make([]float64, len(a)+len(suf)-1)
				for i, x := range a {
					for j, y := range suf {
						prod[i+j] += x * y
					}
				}
				for t0 := -short; t0 < len(prod); t0++ {
					win := make([]float64, short)
					window(win, a, suf, t0)
					for x := range win {
						want := 0.0
						if c := t0 + x; c >= 0 && c < len(prod) {
							want = prod[c]
						}
						near(t, fmt.Sprintf("window t0 %d [%d]", t0, x), win[x], want)
					}
				}
			})
		}
	}
}
