package jsoncodec

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

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

// integerText is the JSON number b (checked by jsonNumber) in plain decimal ("-250" for -2.5e2,
// "05" for 0.05e2) when it is an integer exactly, by protojson's rule: once its point is moved by
// its exponent, no digit other than 0 is left after it (1e-700 and 1.0000000000000000001 are not
// whole, though each rounds to one as a float64). A whole number of more than 20 digits, too long
// for 64 bits, is "". Read exactly, not as a float64: 2^63-1 written 9223372036854775807.0 is
// 2^63 as a float64, which wrapped to -2^63.
func integerText(b []byte) (text string, whole bool) {
	sign := ""
	if b[0] == '-' {
		sign, b = "-", b[1:]
	}
	mant, exp := b, int64(0)
	var expErr error
	if i := bytes.IndexAny(b, "eE"); i >= 0 {
		mant = b[:i]
		exp, expErr = strconv.ParseInt(string(b[i+1:]), 10, 32)
	}
	intPart, frac, _ := bytes.Cut(mant, []byte("."))
	intPart = bytes.TrimLeft(intPart, "0") // JSON's only leading zero is a lone one
	frac = bytes.TrimRight(frac, "0")
	switch {
	case len(intPart)+len(frac) == 0:
		return "0", true
	case expErr != nil: // an exponent past ±2^31
		return "", b[len(mant)+1] != '-'
	case exp >= 0 && int(exp) < len(frac):
		return "", false
	case exp >= 0 && len(intPart)+int(exp) > 20:
		return "", true
	case exp >= 0:
		return sign + string(intPart) + string(frac) + strings.Repeat("0", int(exp)-len(frac)), true
	}
	k := len(intPart) + int(exp) // the digits of intPart from k go after the point
	if len(frac) > 0 || k < 0 || len(bytes.TrimLeft(intPart[k:], "0")) > 0 {
		return "", false
	}
	return sign + string(intPart[:k]), true
}

// jsonNumber reports whether b, a quoted number (which the tokenizer did not check), is a number
// in JSON's grammar: a JSON value that starts with a minus or a digit and ends with a digit (so no
// white space around it) is one.
func jsonNumber(b []byte) bool {
	return len(b) > 0 && (b[0] == '-' || isDigit(b[0])) && isDigit(b[len(b)-1]) && json.Valid(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
