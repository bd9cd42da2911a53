package measure

import "math"

// expTable[j] = 2^(j/64).
var expTable = func() (t [64]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 64)
	}
	return t
}()

// stepExp is e^u within 2 ulps of math.Exp for |u| <= maxRatioLogits (small enough to be
// inlined): preparing a partial credit test takes one per step, and math.Exp's call was most of
// that. Beyond that range its answer means nothing: preparePoly, which may go there, fills the
// blocks again with the a_h (TestPCMExtremeLambda). u =
// (64k + j)·ln2/64 + r with |r| <= ln2/128, so e^u = 2^k·2^(j/64)·e^r, e^r by its Taylor
// polynomial of degree 5 (the first term left out, r^6/720, is below 4e-17 of it); ln2/64 is
// split so that k·hi is exact.
func stepExp(u float64) float64 {
	const (
		invStep = 64 / math.Ln2
		hi      = 0x1.62e42fef80000p-7  // ln2/64 cut to 35 bits: k·hi is exact for |k| < 2^17
		lo      = 0x1.1cf79abc9e3b4p-42 // ln2/64 − hi
		shift   = 0x1.8p52              // adding and subtracting it rounds to an integer
	)
	kf := (u*invStep + shift) - shift
	r := (u - kf*hi) - kf*lo
	r2 := r * r // Estrin's scheme: fewer operations wait for each other than in Horner's
	k := int64(kf)
	return expTable[k&63] * ((1 + r) + r2*((1.0/2+r*(1.0/6))+r2*(1.0/24+r*(1.0/120)))) *
		math.Float64frombits(uint64(k>>6+1023)<<52)
}
