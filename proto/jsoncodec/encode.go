package jsoncodec

import (
	"errors"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The writers append values as protojson writes them (without white space).

// ErrInvalidUTF8 is returned for a string that is not valid UTF-8 (protojson refuses it too).
var ErrInvalidUTF8 = errors.New("jsoncodec: string field contains invalid UTF-8")

// AppendDouble and AppendFloat write a number as protojson does (encoding/json's rule: 'f' unless
// the magnitude is below 1e-6 or at least 1e21, then 'e' with a two-digit minimum exponent; NaN and
// ±Infinity as strings), except that negative zero is written 0: an ability of -0 (a tiny negative
// value rounded, or 0 × -1) reads as a mistake to a person and is one more case for a client's
// parser.
func AppendDouble(b []byte, f float64) []byte { return appendFloat(b, f, 64) }
func AppendFloat(b []byte, f float32) []byte  { return appendFloat(b, float64(f), 32) }

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

// AppendInt32 writes a 32-bit integer; AppendInt64 a 64-bit one, quoted as protojson quotes it.
func AppendInt32(b []byte, v int32) []byte { return strconv.AppendInt(b, int64(v), 10) }

func AppendInt64(b []byte, v int64) []byte {
	b = append(b, '"')
	return append(strconv.AppendInt(b, v, 10), '"')
}

// AppendBool writes true or false.
func AppendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// AppendString quotes s as protojson does: only '"', '\\' and control characters are escaped;
// invalid UTF-8 is an error.
func AppendString(b []byte, s string) ([]byte, error) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return b, ErrInvalidUTF8
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

// AppendStrings writes a list of strings.
func AppendStrings(b []byte, list []string) ([]byte, error) {
	b = append(b, '[')
	var err error
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = AppendString(b, s); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// AppendList writes a list of numbers or booleans with write.
func AppendList[T any](b []byte, list []T, write func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = write(b, v)
	}
	return append(b, ']')
}

// AppendMessages writes a list of messages.
func AppendMessages[P Message](b []byte, list []P) ([]byte, error) {
	var err error
	b = append(b, '[')
	for i, m := range list {
		if i > 0 {
			b = append(b, ',')
		}
		start := len(b)
		if b, err = m.AppendJSONWire(b); err != nil {
			return b, err
		}
		if i == 0 && len(list) > 64 {
			// Size the buffer once from the first element: growing a 19 MB answer by appending
			// would copy it a dozen times and hold two copies at the peak.
			b = slices.Grow(b, (len(b)-start+1)*(len(list)-1)*9/8)
		}
	}
	return append(b, ']'), nil
}

// AppendMap writes a map of string keys as protojson does: an object, keys in sorted order.
func AppendMap[V any](b []byte, m map[string]V, write func([]byte, V) ([]byte, error)) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = AppendString(b, k); err != nil {
			return b, err
		}
		b = append(b, ':')
		if b, err = write(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// The writers AppendMap takes.
func WriteDouble(b []byte, v float64) ([]byte, error) { return AppendDouble(b, v), nil }
func WriteInt32(b []byte, v int32) ([]byte, error)    { return AppendInt32(b, v), nil }
func WriteInt64(b []byte, v int64) ([]byte, error)    { return AppendInt64(b, v), nil }
func WriteBool(b []byte, v bool) ([]byte, error)      { return AppendBool(b, v), nil }
func WriteString(b []byte, v string) ([]byte, error)  { return AppendString(b, v) }
