package jsonwire

import "strconv"

// parseFloat converts a JSON number the tokenizer has already checked. Most numbers on this wire
// are short decimals ("512.5", "700"); for those it takes the exact path of Clinger (1990): when
// the digits form an integer below 2^53 and the power of ten is at most 22, both are exact
// float64 values, and one IEEE multiplication or division rounds the quotient correctly. Anything
// else goes to strconv.ParseFloat, so the result is always the correctly rounded one (the
// differential tests hold it to protojson's).
func parseFloat(text []byte) (float64, error) {
	if v, ok := exactFloat(text); ok {
		return v, nil
	}
	return strconv.ParseFloat(string(text), 64)
}

// pow10 are the powers of ten that float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactFloat is the fast path of parseFloat: digits, an optional fraction, no exponent. ok is
// false when the number is outside it.
func exactFloat(b []byte) (float64, bool) {
	i, neg := 0, false
	if len(b) > 0 && b[0] == '-' {
		i, neg = 1, true
	}
	var mant uint64
	digits, frac, dot := 0, 0, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			if mant == 0 && c == '0' {
				if dot {
					frac++ // leading zeros of a fraction only move the point
				}
				continue
			}
			digits++
			if digits > 15 { // 10^15 < 2^53: any 15 digits are exact
				return 0, false
			}
			mant = mant*10 + uint64(c-'0')
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false // an exponent, or not a number at all
		}
	}
	if frac > 22 {
		return 0, false
	}
	v := float64(mant)
	if frac > 0 {
		v /= pow10[frac]
	}
	if neg {
		v = -v
	}
	return v, true
}
