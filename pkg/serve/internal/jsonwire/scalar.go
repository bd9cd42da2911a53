package jsonwire

import (
	"bytes"
	"encoding/json"
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
	n, ok := dc.integer(kind, text, quoted)
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

// integer reads a whole number for kind from text, quoted (in a string) or as the tokenizer found it.
func (dc *decoder) integer(kind protoreflect.Kind, text []byte, quoted bool) (int64, bool) {
	if quoted && !jsonNumber(text) {
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

// jsonNumber reports whether b, a quoted number (which the tokenizer did not check), is a number
// in JSON's grammar: a JSON value that starts with a minus or a digit and ends with a digit (so no
// white space around it) is one.
func jsonNumber(b []byte) bool {
	return len(b) > 0 && (b[0] == '-' || isDigit(b[0])) && isDigit(b[len(b)-1]) && json.Valid(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

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
