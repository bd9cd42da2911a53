package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-faster/jx"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/layout"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Scalars: strings, numbers (quoted or not, as protojson takes them) and booleans, each
// refused with a problem naming what was found instead. Each reader takes the JSON type t of the
// value, which its caller has looked at already; ok is false when the value was refused (and
// reported).

// scalar decodes a scalar value for f through protoreflect.
func (dc *decoder) scalar(f *fieldPlan, t jx.Type) (protoreflect.Value, bool, error) {
	switch kind := f.fd.Kind(); kind {
	case protoreflect.StringKind:
		s, ok, err := dc.readString(f, t)
		return protoreflect.ValueOfString(s), ok, err
	case protoreflect.BoolKind:
		b, ok, err := dc.readBool(t)
		return protoreflect.ValueOfBool(b), ok, err
	case protoreflect.FloatKind:
		v, ok, err := dc.readFloat(f, t)
		return protoreflect.ValueOfFloat32(float32(v)), ok, err
	case protoreflect.DoubleKind:
		v, ok, err := dc.readFloat(f, t)
		return protoreflect.ValueOfFloat64(v), ok, err
	}
	n, ok, err := dc.readInt(f, t)
	switch f.fd.Kind() {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(n), ok, err
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(n)), ok, err
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(n)), ok, err
	}
	return protoreflect.ValueOfInt32(int32(n)), ok, err
}

// readString reads a string value for f (a JSON number too, for number-as-text fields). A string
// that lies in the body as written shares its memory (the body is never modified after decoding);
// an unescaped one is a new buffer.
func (dc *decoder) readString(f *fieldPlan, t jx.Type) (string, bool, error) {
	d := dc.d
	switch t {
	case jx.String:
		b, err := d.StrBytes()
		if err != nil {
			return "", false, dc.syntax(err)
		}
		if !utf8.Valid(b) {
			dc.problem("must be valid UTF-8 text")
			return "", false, nil
		}
		return layout.Shared(dc.data, b), true, nil
	case jx.Number:
		if f.numberAsText {
			raw, err := d.Raw()
			if err != nil {
				return "", false, dc.syntax(err)
			}
			return layout.Shared(dc.data, raw), true, nil
		}
	}
	dc.problem("must be a string" + got(t))
	return "", false, dc.skip()
}

func (dc *decoder) readBool(t jx.Type) (bool, bool, error) {
	if t != jx.Bool {
		dc.problem("must be true or false" + got(t))
		return false, false, dc.skip()
	}
	b, err := dc.d.Bool()
	return b, err == nil, dc.syntax(err)
}

// numberText reads a JSON number, or a string holding one (protojson accepts both). text is nil
// when the value is not a number (reported).
func (dc *decoder) numberText(t jx.Type) (text []byte, quoted bool, err error) {
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
	dc.problem("must be a number" + got(t))
	return nil, false, dc.skip()
}

// readFloat reads a number for the floating-point field f.
func (dc *decoder) readFloat(f *fieldPlan, t jx.Type) (float64, bool, error) {
	text, quoted, err := dc.numberText(t)
	if err != nil || text == nil {
		return 0, false, err
	}
	var v float64
	switch {
	case quoted && string(text) == "NaN":
		v = math.NaN()
	case quoted && string(text) == "Infinity":
		v = math.Inf(1)
	case quoted && string(text) == "-Infinity":
		v = math.Inf(-1)
	case quoted && !jsonNumber(text):
		dc.problem("must be a number, got " + quoteInput(text))
		return 0, false, nil
	default:
		var err error
		if v, err = parseFloat(text); err != nil || f.fd.Kind() == protoreflect.FloatKind && math.Abs(v) > math.MaxFloat32 {
			dc.problem("must be a finite number, got " + showInput(text))
			return 0, false, nil
		}
	}
	return v, true, nil
}

// readInt reads a whole number for the field f, quoted (in a string) or as the tokenizer found it.
func (dc *decoder) readInt(f *fieldPlan, t jx.Type) (int64, bool, error) {
	text, quoted, err := dc.numberText(t)
	if err != nil || text == nil {
		return 0, false, err
	}
	if quoted && !jsonNumber(text) {
		dc.problem("must be a whole number, got " + quoteInput(text))
		return 0, false, nil
	}
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	switch f.fd.Kind() {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		lo, hi = math.MinInt64, math.MaxInt64
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		lo, hi = 0, math.MaxUint32
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		lo, hi = 0, math.MaxInt64 // larger uint64 values are not used by this contract
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	if errors.Is(err, strconv.ErrSyntax) { // 2.0 and 1e2 are whole numbers written another way
		digits, whole := integerText(text)
		if !whole {
			dc.problem("must be a whole number, got " + showInput(text))
			return 0, false, nil
		}
		n, err = strconv.ParseInt(digits, 10, 64)
	}
	if err != nil || n < lo || n > hi {
		dc.problem("must be a whole number from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10) + ", got " + showInput(text))
		return 0, false, nil
	}
	return n, true, nil
}

// readInt32 is readInt for the fast paths' int32 fields.
func (dc *decoder) readInt32(f *fieldPlan, t jx.Type) (int32, bool, error) {
	n, ok, err := dc.readInt(f, t)
	return int32(n), ok, err
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

// got names the JSON type t found where another was wanted: ", got a string".
func got(t jx.Type) string {
	switch t {
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

// wanted names what a value of kind must be: "a number".
func wanted(kind protoreflect.Kind) string {
	switch kind {
	case protoreflect.MessageKind:
		return "an object"
	case protoreflect.StringKind:
		return "a string"
	case protoreflect.BoolKind:
		return "true or false"
	}
	return "a number"
}
