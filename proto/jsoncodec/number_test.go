package jsoncodec

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestParseFloatIsCorrectlyRounded holds the fast path to strconv on the numbers it takes and on
// its edges: signs, zeros, 15 and 16 digits, fractions of 22 and 23 places, exponents.
func TestParseFloatIsCorrectlyRounded(t *testing.T) {
	t.Parallel()
	cases := []string{
		"0", "-0", "0.0", "-0.0", "1", "-1", "700", "512.5", "0.1", "0.3", "-2.675",
		"123456789012345", "1234567890123456", "999999999999999", "9007199254740993",
		"0.000000000000000000001", "0.0000000000000000000001", "0.00000000000000000000001",
		"1.0000000000000000000000", "3.141592653589793", "0.000123456789012345",
		"1e3", "1E-7", "2.5e+10", "17976931348623157e292", "5e-324", "100000000000000000000000",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var s string
		switch r.IntN(4) {
		case 0:
			s = strconv.FormatFloat(r.NormFloat64()*1000, 'f', r.IntN(20), 64)
		case 1:
			s = strconv.FormatFloat(math.Float64frombits(r.Uint64()), 'g', -1, 64)
		case 2:
			s = strconv.FormatInt(r.Int64N(1<<55)-1<<54, 10)
		default:
			s = strconv.FormatUint(r.Uint64N(1e16), 10) + "." + strconv.FormatUint(r.Uint64N(1e8), 10)
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		want, werr := strconv.ParseFloat(s, 64)
		got, err := parseFloat([]byte(s))
		if (err != nil) != (werr != nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseFloat(%q) = %v, %v; want %v, %v (strconv)", s, got, err, want, werr)
		}
	}
}

// TestExactFloatTakesShortDecimals checks that the fast path is the one taken where it should be
// (else the test above would pass with every number going to strconv), and declined at its limits.
func TestExactFloatTakesShortDecimals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"700", true}, {"-512.5", true}, {"123456789012345", true}, {"0.0000000000000000000001", true},
		{"1234567890123456", false}, {"0.00000000000000000000001", false}, {"1e3", false}, {"NaN", false}, {"1.2.3", false},
	} {
		if _, ok := exactFloat([]byte(tc.in)); ok != tc.ok {
			t.Errorf("exactFloat(%q) ok = %v; want %v", tc.in, ok, tc.ok)
		}
	}
}

// TestWholeNumber: a number written with a fraction or an exponent is whole only if it is an
// integer exactly, not if it merely rounds to one as a float64 (protojson's rule); both sides of
// each edge, and the digits of a whole one.
func TestWholeNumber(t *testing.T) {
	t.Parallel()
	const notWhole, tooLong = "not whole", ""
	for _, tc := range []struct{ in, want string }{
		{"2.0", "2"}, {"1e2", "100"}, {"-0.0", "0"}, {"0.000", "0"}, {"5e0", "5"}, {"1.5e1", "15"}, {"-2.5E+2", "-250"},
		{"100e-2", "1"}, {"150e-2", notWhole}, {"12e-1", notWhole}, {"1.25e1", notWhole}, {"1.2e1", "12"}, {"0.05e2", "05"},
		{"1e-700", notWhole}, {"0e-700", "0"}, {"100000000000000000e-700", notWhole},
		{"1.0000000000000000001", notWhole}, {"1.0000000000000000000", "1"},
		{"1e19", "10000000000000000000"}, {"1e20", tooLong}, {"12345678901234567890.0", "12345678901234567890"}, {"123456789012345678901.0", tooLong},
		{"1e99999999999999999999", tooLong}, {"1e-99999999999999999999", notWhole}, {"0e-99999999999999999999", "0"},
	} {
		text, whole := integerText([]byte(tc.in))
		if want := tc.want != notWhole; whole != want || whole && text != tc.want {
			t.Errorf("integerText(%s) = %q, %v; want %q", tc.in, text, whole, tc.want)
		}
	}
}
