package jsonwire

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-faster/jx"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/layout"
)

// errStop ends decoding after a problem that leaves the tokenizer nowhere to resume from.
var errStop = errors.New("stop")

// Unmarshal decodes one JSON object into m (which it resets) under the wire rules. An empty body
// is an empty object. Every problem found is returned as an *Error.
//
// The strings of m may share memory with data: the caller must not modify data afterwards.
func (c *Codec) Unmarshal(data []byte, m proto.Message) error {
	proto.Reset(m)
	d := jx.GetDecoder()
	defer jx.PutDecoder(d)
	d.ResetBytes(data)
	dec := decoders.Get().(*decoder)
	defer dec.release()
	dec.d, dec.data = d, data
	p := c.planOf(m.ProtoReflect().Descriptor())
	var base layout.Ptr
	if p.fast && reflect.TypeOf(m) == p.st.PtrType {
		base = layout.Addr(m)
	}
	switch d.Next() {
	case jx.Object:
		if err := dec.message(p, m.ProtoReflect(), base); err == nil {
			dec.trailing()
		}
	case jx.Invalid:
		if !blank(data) {
			dec.syntax(d.Skip())
		}
	default:
		dec.problem("request body must be a JSON object")
	}
	if len(dec.problems) > 0 {
		return &Error{Problems: dec.problems, Dropped: dec.dropped}
	}
	return nil
}

// decoders keeps decoders between bodies: their stacks keep their capacity, and their arenas'
// unused room serves the next body (a used slot is never written again, so messages of earlier
// bodies are untouched).
var decoders = sync.Pool{New: func() any { return &decoder{elems: map[*plan]*elements{}} }}

func (dc *decoder) release() {
	dc.d, dc.data, dc.problems, dc.dropped = nil, nil, nil, 0
	dc.path = dc.path[:0]
	dc.dropList(0)
	decoders.Put(dc)
}

func blank(b []byte) bool { return len(bytes.TrimLeft(b, " \t\r\n")) == 0 }

// IsObject reports whether body is, at first sight, a JSON object (its first byte past white
// space is '{'), whatever its Content-Type says: curl -d labels every body form-encoded.
func IsObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

type decoder struct {
	d        *jx.Decoder
	data     []byte // the whole body: strings that lie in it are not copied
	path     []step
	problems []Problem
	dropped  int
	// ptrs is the fast paths' stack of list elements being gathered (JSON and protobuf).
	ptrs []layout.Ptr
	// elems are the chunks list elements come from, one per element type, kept across requests.
	elems map[*plan]*elements
	// Arenas of the fast path's optional scalars.
	strs   arena[string]
	ints   arena[int32]
	floats arena[float64]
	bools  arena[bool]
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
		dc.problem("request body is not valid JSON: " + syntaxMessage(err))
	}
	dc.path = saved
	return errStop
}

// syntaxMessage is the tokenizer's error without the "array: " or "object: " it adds for each
// level the error is nested in (70 KB of them for a body nested 10,000 deep).
func syntaxMessage(err error) string {
	msg := err.Error()
	for {
		rest, ok := strings.CutPrefix(msg, "array: ")
		if !ok {
			rest, ok = strings.CutPrefix(msg, "object: ")
		}
		if !ok {
			break
		}
		msg = rest
	}
	if strings.HasSuffix(msg, "depth: maximum") { // jx's limit, as "inc: depth: maximum"
		return "arrays and objects nest too deeply"
	}
	return msg
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

// message decodes an object into a message: through its generated struct at base when the plan is
// fast (base is not nil), else through protoreflect.
func (dc *decoder) message(p *plan, m protoreflect.Message, base layout.Ptr) error {
	iter, err := dc.d.ObjIter()
	if err != nil {
		return dc.syntax(err)
	}
	var seen uint64
	for iter.Next() {
		key := iter.Key()
		f := p.byName[string(key)]
		if f == nil {
			if p.ignored[string(key)] {
				if err := dc.skip(); err != nil {
					return err
				}
				continue
			}
			if len(dc.problems) >= MaxProblems {
				dc.dropped++ // no more names and suggestions: a body of unknown keys costs no more
				if err := dc.skip(); err != nil {
					return err
				}
				continue
			}
			// The name is shown as the path and in the message: a 1 MB name must not make a 2 MB
			// answer, and a name that is not UTF-8 could not be sent back at all.
			name, note := Clip(key)
			dc.path = append(dc.path, step{name: name})
			msg := `unknown field "` + name + `"` + note
			switch {
			case !utf8.Valid(key):
				msg += ": a field name must be valid UTF-8 text"
			case note == "": // a typo of a known name is short
				if s := suggest(name, p.names); s != "" {
					msg += `; did you mean "` + s + `"?`
				}
			}
			dc.problem(msg)
			dc.path = dc.path[:len(dc.path)-1]
			if err := dc.skip(); err != nil {
				return err
			}
			continue
		}
		dc.path = append(dc.path, step{name: f.jsonName})
		switch t := dc.d.Next(); {
		case seen&f.bit != 0:
			dc.problem("appears more than once")
			err = dc.skip()
		case t == jx.Null:
			err = dc.syntax(dc.d.Null()) // null leaves the field unset, as protojson does
		case !base.IsNil():
			err = dc.fastField(f, base, t)
		default:
			err = dc.field(f, m, t)
		}
		seen |= f.bit
		dc.path = dc.path[:len(dc.path)-1]
		if err != nil {
			return err
		}
	}
	return dc.syntax(iter.Err())
}

// field decodes the value of f, of JSON type t, into m through protoreflect.
func (dc *decoder) field(f *fieldPlan, m protoreflect.Message, t jx.Type) error {
	switch {
	case f.fd.IsMap():
		return dc.mapField(f, m)
	case f.list:
		list := m.Mutable(f.fd).List()
		return dc.eachElement(f, func(t jx.Type) error {
			if f.sub != nil {
				e := list.NewElement()
				err := dc.object(f.sub, e.Message(), layout.Ptr{}, t)
				list.Append(e)
				return err
			}
			v, ok, err := dc.scalar(f, t)
			if ok {
				list.Append(v)
			}
			return err
		})
	case f.sub != nil:
		return dc.object(f.sub, m.Mutable(f.fd).Message(), layout.Ptr{}, t)
	}
	v, ok, err := dc.scalar(f, t)
	if ok {
		m.Set(f.fd, v)
	}
	return err
}

// mapField decodes an object of string keys into a map field with scalar values (such as
// strand -> share). A key given twice is a problem, as a repeated field is.
func (dc *decoder) mapField(f *fieldPlan, m protoreflect.Message) error {
	value := f.sub.byName["value"] // a scalar: the plan is supported only then (scalarMap)
	if dc.d.Next() != jx.Object {
		dc.problem("must be an object")
		return dc.skip()
	}
	mp := m.Mutable(f.fd).Map()
	iter, err := dc.d.ObjIter()
	if err != nil {
		return dc.syntax(err)
	}
	for iter.Next() {
		key := protoreflect.ValueOfString(string(iter.Key())).MapKey()
		dc.path = append(dc.path, step{name: key.String(), key: true})
		switch {
		case !utf8.Valid(iter.Key()):
			// protojson refuses it too; kept, it could not be written back (the path shows it with
			// U+FFFD).
			dc.problem("a key must be valid UTF-8 text")
			err = dc.skip()
		case mp.Has(key):
			dc.problem("appears more than once")
			err = dc.skip()
		default:
			var v protoreflect.Value
			var ok bool
			if v, ok, err = dc.scalar(value, dc.d.Next()); ok {
				mp.Set(key, v)
			}
		}
		dc.path = dc.path[:len(dc.path)-1]
		if err != nil {
			return err
		}
	}
	return dc.syntax(iter.Err())
}

// eachElement decodes the array of the list field f, each element (of JSON type t) with read under
// its path. The protoreflect and fast paths share its limit and its refusal of null.
func (dc *decoder) eachElement(f *fieldPlan, read func(t jx.Type) error) error {
	if dc.d.Next() != jx.Array {
		dc.problem("must be an array")
		return dc.skip()
	}
	iter, err := dc.d.ArrIter()
	if err != nil {
		return dc.syntax(err)
	}
	for i := 0; iter.Next(); i++ {
		if f.maxLen > 0 && i > f.maxLen {
			n := strconv.Itoa(f.maxLen)
			dc.problem("holds more than " + n + " entries; the limit is " + n)
			return errStop
		}
		dc.path = append(dc.path, step{index: i})
		if t := dc.d.Next(); t == jx.Null {
			dc.problem("must be " + wanted(f.fd.Kind()) + ", not null")
			err = dc.skip()
		} else {
			err = read(t)
		}
		dc.path = dc.path[:len(dc.path)-1]
		if err != nil {
			return err
		}
	}
	return dc.syntax(iter.Err())
}

// object decodes a message value of JSON type t: an object, or for positional messages a number
// array.
func (dc *decoder) object(p *plan, m protoreflect.Message, base layout.Ptr, t jx.Type) error {
	switch t {
	case jx.Object:
		return dc.message(p, m, base)
	case jx.Array:
		if p.positional {
			return dc.positional(p, m, base)
		}
	}
	dc.problem("must be an object")
	return dc.skip()
}

func (dc *decoder) positional(p *plan, m protoreflect.Message, base layout.Ptr) error {
	raw, err := dc.d.Raw()
	if err != nil {
		return dc.syntax(err)
	}
	sub := jx.GetDecoder()
	defer jx.PutDecoder(sub)
	sub.ResetBytes(raw)
	var buf [8]float64
	values := buf[:0]
	ok := true
	iter, err := sub.ArrIter()
	for err == nil && iter.Next() {
		if sub.Next() != jx.Number || len(values) == len(p.fields) {
			ok = false
			err = sub.Skip()
			continue
		}
		v, ferr := sub.Float64()
		if ferr != nil || math.IsInf(v, 0) {
			ok = false
			continue
		}
		values = append(values, v)
	}
	if err == nil {
		err = iter.Err()
	}
	if err != nil || !ok || len(values) != len(p.fields) {
		names := strings.Join(p.names, ", ") // the JSON names, in field order
		dc.problem("an array entry must hold exactly " + strconv.Itoa(len(p.fields)) + " numbers: " + names)
		return nil
	}
	for i, f := range p.fields {
		if !base.IsNil() {
			store(f, base, &dc.floats, values[i])
			continue
		}
		if f.fd.Kind() == protoreflect.FloatKind {
			m.Set(f.fd, protoreflect.ValueOfFloat32(float32(values[i])))
		} else {
			m.Set(f.fd, protoreflect.ValueOfFloat64(values[i]))
		}
	}
	return nil
}
