package jsonwire

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/go-faster/jx"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/layout"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Scalars: strings, numbers (quoted or not, as protojson takes them) and booleans, each
// refused with a problem naming what was found instead.

// scalar decodes a scalar value for f. ok is false when the value was refused (and reported).
func (dc *decoder) scalar(f *fieldPlan) (v protoreflect.Value, ok bool, err error) {
	d := dc.d
	kind := f.fd.Kind()
	switch kind {
	case protoreflect.StringKind:
		s, ok, err := dc.readString(f)
		return protoreflect.ValueOfString(s), ok, err
	case protoreflect.BoolKind:
		if d.Next() == jx.Bool {
			b, err := d.Bool()
			return protoreflect.ValueOfBool(b), err == nil, dc.syntax(err)
		}
		dc.problem("must be true or false" + got(d))
		return v, false, dc.skip()
	}
	text, quoted, err := dc.numberText()
	if err != nil || text == nil {
		return v, false, err
	}
	if isFloat(kind) {
		f, ok := dc.float(kind, text, quoted)
		if !ok {
			return v, false, nil
		}
		if kind == protoreflect.FloatKind {
			return protoreflect.ValueOfFloat32(float32(f)), true, nil
		}
		return protoreflect.ValueOfFloat64(f), true, nil
	}
	n, ok := dc.integer(kind, text)
	if !ok {
		return v, false, nil
	}
	switch kind {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(n), true, nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(n)), true, nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(n)), true, nil
	}
	return protoreflect.ValueOfInt32(int32(n)), true, nil
}

// readString reads a string value for f (a JSON number too, for number-as-text fields). A string
// that lies in the body as written is not copied.
func (dc *decoder) readString(f *fieldPlan) (string, bool, error) {
	d := dc.d
	switch d.Next() {
	case jx.String:
		b, err := d.StrBytes()
		if err != nil {
			return "", false, dc.syntax(err)
		}
		if !utf8.Valid(b) {
			dc.problem("must be valid UTF-8 text")
			return "", false, nil
		}
		return dc.text(b), true, nil
	case jx.Number:
		if f.numberAsText {
			raw, err := d.Raw()
			if err != nil {
				return "", false, dc.syntax(err)
			}
			return dc.text(raw), true, nil
		}
	}
	dc.problem("must be a string" + got(d))
	return "", false, dc.skip()
}

// text is b as a string, sharing the body's memory when b lies in it (the body is never modified
// after decoding), else a copy (an unescaped string is a new buffer).
func (dc *decoder) text(b []byte) string {
	return layout.Shared(dc.data, b)
}

// numberText reads a JSON number, or a string holding one (protojson accepts both). text is nil
// when the value is not a number (reported).
func (dc *decoder) numberText() (text []byte, quoted bool, err error) {
	return dc.numberTextOf(dc.d.Next())
}

// numberTextOf is numberText for a value whose type t the caller has looked at already.
func (dc *decoder) numberTextOf(t jx.Type) (text []byte, quoted bool, err error) {
	d := dc.d
	switch t {
	case jx.Number:
		raw, err := d.Raw()
		if err != nil {
			return nil, false, dc.syntax(err)
		}
		return raw, false, nil
	case jx.String:
		b, err := d.StrBytes()
		if err != nil {
			return nil, false, dc.syntax(err)
		}
		return b, true, nil
	}
	dc.problem("must be a number" + got(d))
	return nil, false, dc.skip()
}

func (dc *decoder) float(kind protoreflect.Kind, text []byte, quoted bool) (float64, bool) {
	var f float64
	switch {
	case quoted && string(text) == "NaN":
		f = math.NaN()
	case quoted && string(text) == "Infinity":
		f = math.Inf(1)
	case quoted && string(text) == "-Infinity":
		f = math.Inf(-1)
	case quoted && !jsonNumber(text):
		dc.problem("must be a number, got " + quoteInput(text))
		return 0, false
	default:
		var err error
		if f, err = parseFloat(text); err != nil {
			dc.problem("must be a finite number, got " + showInput(text))
			return 0, false
		}
	}
	if kind == protoreflect.FloatKind && !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
		dc.problem("must be a finite number, got " + showInput(text))
		return 0, false
	}
	return f, true
}

func (dc *decoder) integer(kind protoreflect.Kind, text []byte) (int64, bool) {
	if !jsonNumber(text) {
		dc.problem("must be a whole number, got " + quoteInput(text))
		return 0, false
	}
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	switch kind {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		lo, hi = math.MinInt64, math.MaxInt64
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		lo, hi = 0, math.MaxUint32
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		lo, hi = 0, math.MaxInt64 // larger uint64 values are not used by this contract
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	if err != nil {
		// 2.0 and 1e2 are whole numbers written another way; 1e-700 and 1.0000000000000000001
		// are not, though each rounds to one as a float64.
		f, ferr := strconv.ParseFloat(string(text), 64)
		whole := wholeNumber(text)
		if !whole || ferr != nil || f < float64(lo) || f > float64(hi) {
			if whole {
				dc.problem("must be a whole number from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10) + ", got " + showInput(text))
			} else {
				dc.problem("must be a whole number, got " + showInput(text))
			}
			return 0, false
		}
		n = int64(f)
	}
	if n < lo || n > hi {
		dc.problem("must be a whole number from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10) + ", got " + showInput(text))
		return 0, false
	}
	return n, true
}

// wholeNumber reports whether the JSON number b (checked by jsonNumber) is an integer exactly:
// once its point is moved by its exponent, no digit after the point is other than 0.
func wholeNumber(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("-"))
	mant, exp := b, 0
	if i := bytes.IndexAny(b, "eE"); i >= 0 {
		mant = b[:i]
		e, err := strconv.Atoi(string(b[i+1:]))
		switch {
		case err != nil && b[i+1] != '-':
			return true // a huge positive exponent: whole, and out of every range
		case err != nil:
			e = -len(mant) - 1 // a huge negative one: every digit goes after the point
		}
		exp = e
	}
	intPart, frac := mant, []byte(nil)
	if i := bytes.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	if exp >= 0 {
		return exp >= len(frac) || allZero(frac[exp:])
	}
	k := min(-exp, len(intPart)) // the integer part's last k digits go after the point
	return allZero(intPart[len(intPart)-k:]) && allZero(frac)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != '0' {
			return false
		}
	}
	return true
}

// jsonNumber reports whether b is a number in JSON's grammar (for quoted numbers, which the
// tokenizer did not check): an integer part, then an optional fraction and exponent.
func jsonNumber(b []byte) bool {
	i, ok := integerPart(b)
	if !ok {
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false // a fraction needs a digit
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i, ok = exponent(b, i+1); !ok {
			return false
		}
	}
	return i == len(b)
}

// integerPart is the index past a number's optional minus and its integer part: 0, or digits
// without a leading zero.
func integerPart(b []byte) (int, bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		return i + 1, true
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		return digits(b, i), true
	}
	return i, false
}

// exponent is the index past an exponent's optional sign and its digits, from i (past the e).
func exponent(b []byte, i int) (int, bool) {
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	j := digits(b, i)
	return j, j > i // an exponent needs a digit
}

// digits is the index past the decimal digits of b from i.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// got names the JSON type found where another was wanted: ", got a string".
func got(d *jx.Decoder) string {
	switch d.Next() {
	case jx.String:
		return ", got a string"
	case jx.Number:
		return ", got a number"
	case jx.Bool:
		return ", got true or false"
	case jx.Array:
		return ", got an array"
	case jx.Object:
		return ", got an object"
	}
	return ""
}
