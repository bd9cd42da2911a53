package jsonwire

import (
	"errors"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/go-faster/jx"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// errStop ends decoding after a problem that leaves the tokenizer nowhere to resume from.
var errStop = errors.New("stop")

// Unmarshal decodes one JSON object into m (which it resets) under the wire rules. An empty body
// is an empty object. Every problem found is returned as an *Error.
func (c *Codec) Unmarshal(data []byte, m proto.Message) error {
	proto.Reset(m)
	d := jx.GetDecoder()
	defer jx.PutDecoder(d)
	d.ResetBytes(data)
	dec := decoder{d: d}
	switch d.Next() {
	case jx.Object:
		if err := dec.message(c.planOf(m.ProtoReflect().Descriptor()), m.ProtoReflect()); err == nil {
			dec.trailing()
		}
	case jx.Invalid:
		if !blank(data) {
			dec.syntax(d.Skip())
		}
	default:
		dec.problem("request body must be a JSON object")
	}
	if dec.dropped > 0 {
		dec.problems = append(dec.problems, Problem{Message: strconv.Itoa(dec.dropped) + " more problems not listed"})
	}
	if len(dec.problems) > 0 {
		return &Error{Problems: dec.problems}
	}
	return nil
}

func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

type decoder struct {
	d        *jx.Decoder
	path     []step
	problems []Problem
	dropped  int
}

// problem records a problem at the current path.
func (dc *decoder) problem(msg string) {
	if len(dc.problems) >= MaxProblems {
		dc.dropped++
		return
	}
	dc.problems = append(dc.problems, Problem{Path: pathString(dc.path), Message: msg})
}

// syntax records a tokenizer error (malformed JSON) and stops decoding.
func (dc *decoder) syntax(err error) error {
	if err == nil {
		return nil
	}
	saved := dc.path
	dc.path = nil
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		dc.problem("request body is not valid JSON: it ends too early")
	} else {
		dc.problem("request body is not valid JSON: " + err.Error())
	}
	dc.path = saved
	return errStop
}

// trailing refuses anything but white space after the object.
func (dc *decoder) trailing() {
	if dc.d.Next() == jx.Invalid {
		if err := dc.d.Skip(); err == nil || errors.Is(err, io.EOF) {
			return
		}
	}
	dc.path = nil
	dc.problem("unexpected data after the JSON object")
}

// skip passes over a value the decoder reported a problem with.
func (dc *decoder) skip() error { return dc.syntax(dc.d.Skip()) }

func (dc *decoder) message(p *plan, m protoreflect.Message) error {
	iter, err := dc.d.ObjIter()
	if err != nil {
		return dc.syntax(err)
	}
	var seen uint64
	for iter.Next() {
		key := iter.Key()
		f, ok := p.byName[string(key)]
		if !ok {
			if p.ignored[string(key)] {
				if err := dc.skip(); err != nil {
					return err
				}
				continue
			}
			name := string(key)
			dc.path = append(dc.path, step{name: name})
			if s := suggest(name, p.names); s != "" {
				dc.problem(`unknown field "` + name + `"; did you mean "` + s + `"?`)
			} else {
				dc.problem(`unknown field "` + name + `"`)
			}
			dc.path = dc.path[:len(dc.path)-1]
			if err := dc.skip(); err != nil {
				return err
			}
			continue
		}
		dc.path = append(dc.path, step{name: f.jsonName})
		if seen&f.bit != 0 {
			dc.problem("appears more than once")
			err = dc.skip()
		} else {
			seen |= f.bit
			err = dc.field(f, m)
		}
		dc.path = dc.path[:len(dc.path)-1]
		if err != nil {
			return err
		}
	}
	return dc.syntax(iter.Err())
}

func (dc *decoder) field(f *fieldPlan, m protoreflect.Message) error {
	if dc.d.Next() == jx.Null {
		return dc.syntax(dc.d.Null()) // null leaves the field unset, as protojson does
	}
	if f.list {
		if dc.d.Next() != jx.Array {
			dc.problem("must be an array")
			return dc.skip()
		}
		list := m.Mutable(f.fd).List()
		iter, err := dc.d.ArrIter()
		if err != nil {
			return dc.syntax(err)
		}
		for i := 0; iter.Next(); i++ {
			dc.path = append(dc.path, step{index: i})
			err := dc.element(f, list)
			dc.path = dc.path[:len(dc.path)-1]
			if err != nil {
				return err
			}
		}
		return dc.syntax(iter.Err())
	}
	if f.sub != nil {
		return dc.object(f.sub, m.Mutable(f.fd).Message())
	}
	v, ok, err := dc.scalar(f)
	if ok {
		m.Set(f.fd, v)
	}
	return err
}

func (dc *decoder) element(f *fieldPlan, list protoreflect.List) error {
	if f.sub != nil {
		if dc.d.Next() == jx.Null {
			dc.problem("must be an object, not null")
			return dc.skip()
		}
		e := list.NewElement()
		err := dc.object(f.sub, e.Message())
		list.Append(e)
		return err
	}
	v, ok, err := dc.scalar(f)
	if ok {
		list.Append(v)
	}
	return err
}

// object decodes a message value: an object, or for positional messages a number array.
func (dc *decoder) object(p *plan, m protoreflect.Message) error {
	switch dc.d.Next() {
	case jx.Object:
		return dc.message(p, m)
	case jx.Array:
		if p.positional {
			return dc.positional(p, m)
		}
	}
	dc.problem("must be an object")
	return dc.skip()
}

func (dc *decoder) positional(p *plan, m protoreflect.Message) error {
	raw, err := dc.d.Raw()
	if err != nil {
		return dc.syntax(err)
	}
	sub := jx.DecodeBytes(raw)
	values := make([]float64, 0, len(p.fields))
	ok := true
	err = sub.Arr(func(d *jx.Decoder) error {
		if d.Next() != jx.Number || len(values) == len(p.fields) {
			ok = false
			return d.Skip()
		}
		v, err := d.Float64()
		if err != nil || math.IsInf(v, 0) {
			ok = false
			return nil
		}
		values = append(values, v)
		return nil
	})
	if err != nil || !ok || len(values) != len(p.fields) {
		msg := "an array entry must hold exactly " + strconv.Itoa(len(p.fields)) + " numbers:"
		for i, f := range p.fields {
			if i > 0 {
				msg += ","
			}
			msg += " " + f.jsonName
		}
		dc.problem(msg)
		return nil
	}
	for i, f := range p.fields {
		if f.fd.Kind() == protoreflect.FloatKind {
			m.Set(f.fd, protoreflect.ValueOfFloat32(float32(values[i])))
		} else {
			m.Set(f.fd, protoreflect.ValueOfFloat64(values[i]))
		}
	}
	return nil
}

// scalar decodes a scalar value for f. ok is false when the value was refused (and reported).
func (dc *decoder) scalar(f *fieldPlan) (v protoreflect.Value, ok bool, err error) {
	d := dc.d
	kind := f.fd.Kind()
	switch kind {
	case protoreflect.StringKind:
		switch d.Next() {
		case jx.String:
			b, err := d.StrBytes()
			if err != nil {
				return v, false, dc.syntax(err)
			}
			if !utf8.Valid(b) {
				dc.problem("must be valid UTF-8 text")
				return v, false, nil
			}
			return protoreflect.ValueOfString(string(b)), true, nil
		case jx.Number:
			if f.numberAsText {
				raw, err := d.Raw()
				if err != nil {
					return v, false, dc.syntax(err)
				}
				return protoreflect.ValueOfString(string(raw)), true, nil
			}
		}
		dc.problem("must be a string" + got(d))
		return v, false, dc.skip()
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
		return dc.float(kind, text, quoted)
	}
	return dc.integer(kind, text)
}

// numberText reads a JSON number, or a string holding one (protojson accepts both). text is nil
// when the value is not a number (reported).
func (dc *decoder) numberText() (text []byte, quoted bool, err error) {
	d := dc.d
	switch d.Next() {
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

func (dc *decoder) float(kind protoreflect.Kind, text []byte, quoted bool) (protoreflect.Value, bool, error) {
	s := string(text)
	var f float64
	switch {
	case quoted && s == "NaN":
		f = math.NaN()
	case quoted && s == "Infinity":
		f = math.Inf(1)
	case quoted && s == "-Infinity":
		f = math.Inf(-1)
	default:
		var err error
		if quoted && !jsonNumber(text) {
			dc.problem("must be a number, got " + strconv.Quote(s))
			return protoreflect.Value{}, false, nil
		}
		f, err = strconv.ParseFloat(s, 64)
		if err != nil {
			dc.problem("must be a finite number, got " + s)
			return protoreflect.Value{}, false, nil
		}
	}
	if kind == protoreflect.FloatKind {
		if !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
			dc.problem("must be a finite number, got " + s)
			return protoreflect.Value{}, false, nil
		}
		return protoreflect.ValueOfFloat32(float32(f)), true, nil
	}
	return protoreflect.ValueOfFloat64(f), true, nil
}

func (dc *decoder) integer(kind protoreflect.Kind, text []byte) (protoreflect.Value, bool, error) {
	s := string(text)
	if !jsonNumber(text) {
		dc.problem("must be a whole number, got " + strconv.Quote(s))
		return protoreflect.Value{}, false, nil
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
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// 2.0 and 1e2 are whole numbers written another way.
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
			if ferr == nil && f == math.Trunc(f) {
				dc.problem("must be a whole number from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10) + ", got " + s)
			} else {
				dc.problem("must be a whole number, got " + s)
			}
			return protoreflect.Value{}, false, nil
		}
		n = int64(f)
	}
	if n < lo || n > hi {
		dc.problem("must be a whole number from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10) + ", got " + s)
		return protoreflect.Value{}, false, nil
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

// jsonNumber reports whether b is a number in JSON's grammar (for quoted numbers, which the
// tokenizer did not check).
func jsonNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(b)
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
