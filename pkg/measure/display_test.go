package measure

import (
	"math"
	"testing"
)

func TestDisplay(t *testing.T) {
	t.Parallel()
	lex, quant := testFramework(t, "lexile"), testFramework(t, "quantile")
	cases := []struct {
		f    *Framework
		v    float64
		want string
	}{
		{lex, 572.5, "575L"},    // half up
		{lex, 572.4, "570L"},    // below half
		{lex, 577.5, "580L"},    // half up from 7.5
		{lex, -372.5, "BR370L"}, // half up is towards +∞ for negatives too
		{lex, -372.6, "BR375L"},
		{lex, -147.5, "BR145L"},
		{lex, 845, "845L"},
		{lex, 2.4, "0L"}, // rounds to 0: not negative, so no prefix
		{lex, 0, "0L"},
		{lex, 2.5, "5L"},
		{lex, 2, "0L"},
		{lex, -2.5, "0L"}, // half up: rounds to 0, the last value shown without the prefix
		{lex, -2.6, "BR5L"},
		{lex, -3, "BR5L"},     // the first value below 0 after rounding
		{lex, -400, "BR400L"}, // bottom cap
		{lex, -401, "BR400L"},
		{lex, -5000, "BR400L"},
		{lex, 1825, "1825L"}, // top cap
		{lex, 1900, "1825L"},
		{lex, 1e12, "1825L"},
		{lex, 1337.5, "1340L"},
		{lex, math.Inf(1), "1825L"},
		{lex, math.Inf(-1), "BR400L"},
		{lex, math.NaN(), ""},
		{quant, -50, "EM50Q"},
		{quant, 1650, "1650Q"},
		{quant, 1651, "1650Q"},
		{quant, 1234, "1235Q"},
		{quant, -999, "EM400Q"},
		{quant, 0.1, "0Q"},
		{quant, -2.5, "0Q"},
		{quant, -2.6, "EM5Q"},
	}
	for _, c := range cases {
		if got := c.f.Display(c.v); got != c.want {
			t.Errorf("%s Display(%v) = %q; want %q", c.f.Name, c.v, got, c.want)
		}
	}
}

func TestDisplayGrade(t *testing.T) {
	t.Parallel()
	lex, quant := testFramework(t, "lexile"), testFramework(t, "quantile")
	cases := []struct {
		f     *Framework
		v     float64
		grade int
		want  string
	}{
		{lex, 1000, 0, "850L"},
		{lex, 849, 0, "850L"},
		{lex, 1000, 2, "1000L"},
		{lex, 1300, 3, "1200L"},
		{lex, 1900, 12, "1825L"},
		{lex, -900, 5, "BR400L"},
		{lex, 1900, 13, "1825L"}, // out of range: the framework's top cap
		{lex, 1900, -1, "1825L"},
		{quant, 700, 0, "600Q"},
		{quant, 1000, 3, "975Q"},
		{quant, 1000, 4, "1000Q"},
	}
	for _, c := range cases {
		if got := c.f.DisplayGrade(c.v, c.grade); got != c.want {
			t.Errorf("%s DisplayGrade(%v, %d) = %q; want %q", c.f.Name, c.v, c.grade, got, c.want)
		}
	}
}

func TestRound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    float64
		want int
	}{
		{2.5, 3}, {2.4999, 2}, {-2.5, -2}, {-2.6, -3}, {0, 0}, {-0.4, 0}, {572.5, 573},
		{1e12, math.MaxInt32}, {-1e12, math.MinInt32}, {math.NaN(), 0}, {math.Inf(1), math.MaxInt32},
	}
	for _, c := range cases {
		if got := Round(c.v); got != c.want {
			t.Errorf("Round(%v) = %d; want %d", c.v, got, c.want)
		}
	}
}
