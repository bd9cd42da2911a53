package jsoncodec

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/go-faster/jx"
)

// Scalars: strings, numbers (quoted or not, as protojson takes them) and booleans, each refused
// with a problem naming what was found instead. Each reader takes the JSON type t of the value,
// which Field has looked at already; ok is false when the value was refused (and reported).

// String reads the string field being read (a JSON number too, kept as its text, when the rules
// say the field takes one).
func (d *Decoder) String(t jx.Type) string {
	s, _ := d.ReadString(t, t == jx.Number && d.asText())
	return s
}

// OptString is String for an optional field.
func (d *Decoder) OptString(t jx.Type) *string {
	if s, ok := d.ReadString(t, t == jx.Number && d.asText()); ok {
		return d.strs.put(s)
	}
	return nil
}

func (d *Decoder) asText() bool {
	return d.info != nil && d.rules.NumberAsText(d.info.FullName, d.info.Names[d.field])
}

// ReadString reads a string value (a JSON number too when numberAsText).
func (d *Decoder) ReadString(t jx.Type, numberAsText bool) (string, bool) {
	switch t {
	case jx.String:
		b, ok := d.strBytes()
		if !ok {
			return "", false
		}
		if !utf8.Valid(b) {
			d.Problem("must be valid UTF-8 text")
			return "", false
		}
		return d.share(b), true
	case jx.Number:
		if numberAsText {
			raw, ok := d.numberBytes()
			if !ok {
				return "", false
			}
			return d.share(raw), true
		}
	}
	d.Problem("must be a string" + got(t))
	d.Skip()
	return "", false
}

// Bool reads a boolean field; OptBool an optional one.
func (d *Decoder) Bool(t jx.Type) bool { b, _ := d.ReadBool(t); return b }

func (d *Decoder) OptBool(t jx.Type) *bool {
	if b, ok := d.ReadBool(t); ok {
		return d.bools.put(b)
	}
	return nil
}

// ReadBool reads true or false.
func (d *Decoder) ReadBool(t jx.Type) (bool, bool) {
	if t != jx.Bool {
		d.Problem("must be true or false" + got(t))
		d.Skip()
		return false, false
	}
	if d.fast {
		if d.data[d.pos] == 't' {
			return true, d.literal("true")
		}
		return false, d.literal("false")
	}
	b, err := d.d.Bool()
	d.Syntax(err)
	return b, err == nil
}

// strBytes reads a string's bytes (unescaped), numberBytes a number's text.
func (d *Decoder) strBytes() ([]byte, bool) {
	if d.fast {
		return d.str()
	}
	b, err := d.d.StrBytes()
	d.Syntax(err)
	return b, err == nil
}

func (d *Decoder) numberBytes() ([]byte, bool) {
	if d.fast {
		return d.number()
	}
	raw, err := d.d.Raw()
	d.Syntax(err)
	return raw, err == nil
}

// Double reads a double field; OptDouble an optional one.
func (d *Decoder) Double(t jx.Type) float64 { v, _ := d.ReadFloat(t, false); return v }

func (d *Decoder) OptDouble(t jx.Type) *float64 {
	if v, ok := d.ReadFloat(t, false); ok {
		return d.doubles.put(v)
	}
	return nil
}

// Int32 reads an int32 field; OptInt32 an optional one.
func (d *Decoder) Int32(t jx.Type) int32 {
	n, _ := d.ReadInt(t, math.MinInt32, math.MaxInt32)
	return int32(n)
}

func (d *Decoder) OptInt32(t jx.Type) *int32 {
	if n, ok := d.ReadInt(t, math.MinInt32, math.MaxInt32); ok {
		return d.int32s.put(int32(n))
	}
	return nil
}

// Int64 reads an int64 field; OptInt64 an optional one.
func (d *Decoder) Int64(t jx.Type) int64 {
	n, _ := d.ReadInt(t, math.MinInt64, math.MaxInt64)
	return n
}

func (d *Decoder) OptInt64(t jx.Type) *int64 {
	if n, ok := d.ReadInt(t, math.MinInt64, math.MaxInt64); ok {
		return d.int64s.put(n)
	}
	return nil
}

// numberText reads a JSON number, or a string holding one (protojson accepts both). text is nil
// when the value is not a number (reported).
func (d *Decoder) numberText(t jx.Type) (text []byte, quoted bool) {
	switch t {
	case jx.Number:
		raw, ok := d.numberBytes()
		if !ok {
			return nil, false
		}
		return raw, false
	case jx.String:
		b, ok := d.strBytes()
		if !ok {
			return nil, false
		}
		return b, true
	}
	d.Problem("must be a number" + got(t))
	d.Skip()
	return nil, false
}

// ReadFloat reads a number for a floating-point field (float32: a float field, whose range is
// narrower).
func (d *Decoder) ReadFloat(t jx.Type, float32 bool) (float64, bool) {
	text, quoted := d.numberText(t)
	if text == nil {
		return 0, false
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
		d.Problem("must be a number, got " + quoteInput(text))
		return 0, false
	default:
		var err error
		if v, err = parseFloat(text); err != nil || float32 && math.Abs(v) > math.MaxFloat32 {
			d.Problem("must be a finite number, got " + showInput(text))
			return 0, false
		}
	}
	return v, true
}

// ReadInt reads a whole number from lo to hi, quoted (in a string) or as the tokenizer found it.
func (d *Decoder) ReadInt(t jx.Type, lo, hi int64) (int64, bool) {
	text, quoted := d.numberText(t)
	if text == nil {
		return 0, false
	}
	if quoted && !jsonNumber(text) {
		d.Problem("must be a whole number, got " + quoteInput(text))
		return 0, false
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	if errors.Is(err, strconv.ErrSyntax) { // 2.0 and 1e2 are whole numbers written another way
		digits, whole := integerText(text)
		if !whole {
			d.Problem("must be a whole number, got " + showInput(text))
			return 0, false
		}
		n, err = strconv.ParseInt(digits, 10, 64)
	}
	if err != nil || n < lo || n > hi {
		d.Problem("must be a whole number from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10) + ", got " + showInput(text))
		return 0, false
	}
	return n, true
}

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
