package jsonwire

import (
	"errors"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ErrUnsupported is returned by Marshal for messages the codec does not write itself; the caller
// uses protojson for them.
var ErrUnsupported = errors.New("jsonwire: message kind not supported")

var errInvalidUTF8 = errors.New("jsonwire: string field contains invalid UTF-8")

// Marshal appends m's JSON to dst: what protojson with EmitUnpopulated writes, without white
// space. Unset proto3-optional fields (scalars and messages) are left out, other unset message
// fields are null, every other field is written with its zero value.
func (c *Codec) Marshal(dst []byte, m proto.Message) ([]byte, error) {
	p := c.planOf(m.ProtoReflect().Descriptor())
	if !p.supported {
		return dst, ErrUnsupported
	}
	return appendMessage(dst, p, m.ProtoReflect())
}

func appendMessage(b []byte, p *plan, m protoreflect.Message) ([]byte, error) {
	b = append(b, '{')
	first := true
	var err error
	for _, f := range p.fields {
		if f.presence && !m.Has(f.fd) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.key...)
		switch {
		case f.fd.IsMap():
			b, err = appendMap(b, f, m.Get(f.fd).Map())
		case f.list:
			b, err = appendList(b, f, m.Get(f.fd).List())
		case f.sub != nil && !m.Has(f.fd):
			b = append(b, "null"...)
		case f.sub != nil:
			b, err = appendMessage(b, f.sub, m.Get(f.fd).Message())
		default:
			b, err = appendScalar(b, f.fd.Kind(), m.Get(f.fd))
		}
		if err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendList writes the list of field f: messages, or scalars.
func appendList(b []byte, f *fieldPlan, list protoreflect.List) ([]byte, error) {
	var err error
	b = append(b, '[')
	for i := 0; i < list.Len(); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		if f.sub != nil {
			start := len(b)
			b, err = appendMessage(b, f.sub, list.Get(i).Message())
			if i == 0 && list.Len() > 64 {
				// Size the buffer once from the first element: growing a 19 MB answer by
				// appending would copy it a dozen times and hold two copies at the peak.
				b = slices.Grow(b, (len(b)-start+1)*(list.Len()-1)*9/8)
			}
		} else {
			b, err = appendScalar(b, f.fd.Kind(), list.Get(i))
		}
		if err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendMap writes a map of string keys and scalar values as protojson does: an object, keys in
// sorted order.
func appendMap(b []byte, f *fieldPlan, mp protoreflect.Map) ([]byte, error) {
	keys := make([]string, 0, mp.Len())
	mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k.String())
		return true
	})
	slices.Sort(keys)
	kind := f.fd.MapValue().Kind()
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendString(b, k); err != nil {
			return b, err
		}
		b = append(b, ':')
		if b, err = appendScalar(b, kind, mp.Get(protoreflect.ValueOfString(k).MapKey())); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func appendScalar(b []byte, kind protoreflect.Kind, v protoreflect.Value) ([]byte, error) {
	switch kind {
	case protoreflect.StringKind:
		return appendString(b, v.String())
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v.Bool()), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		b = append(b, '"')
		return append(strconv.AppendInt(b, v.Int(), 10), '"'), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		b = append(b, '"')
		return append(strconv.AppendUint(b, v.Uint(), 10), '"'), nil
	case protoreflect.FloatKind:
		return appendFloat(b, v.Float(), 32), nil
	case protoreflect.DoubleKind:
		return appendFloat(b, v.Float(), 64), nil
	}
	return b, ErrUnsupported
}

// appendFloat formats as protojson does (encoding/json's rule: 'f' unless the magnitude is below
// 1e-6 or at least 1e21, then 'e' with a two-digit minimum exponent; NaN and ±Infinity as strings),
// except that negative zero is written 0: an ability of -0 (a tiny negative value rounded, or
// 0 × -1) reads as a mistake to a person and is one more case for a client's parser.
func appendFloat(b []byte, f float64, bitSize int) []byte {
	if f == 0 {
		f = 0 // -0 == 0: this drops the sign
	}
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bitSize == 64 && (abs < 1e-6 || abs >= 1e21) || bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bitSize)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString quotes s as protojson does: only '"', '\\' and control characters are escaped;
// invalid UTF-8 is an error.
func appendString(b []byte, s string) ([]byte, error) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return b, errInvalidUTF8
			}
			i += n
			continue
		}
		if c >= ' ' && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, '\\')
		switch c {
		case '"', '\\':
			b = append(b, c)
		case '\b':
			b = append(b, 'b')
		case '\f':
			b = append(b, 'f')
		case '\n':
			b = append(b, 'n')
		case '\r':
			b = append(b, 'r')
		case '\t':
			b = append(b, 't')
		default:
			b = append(b, 'u')
			b = append(b, "0000"[1+(bits.Len32(uint32(c))-1)/4:]...)
			b = strconv.AppendUint(b, uint64(c), 16)
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}
