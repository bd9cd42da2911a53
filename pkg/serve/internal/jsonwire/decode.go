package jsonwire

import (
	"bytes"
	"math"
	"unicode/utf8"

	"github.com/go-faster/jx"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// Unmarshal decodes one JSON object into m (which it resets) under the wire rules. An empty body
// is an empty object. Every problem found is returned as an *Error. m shares no memory with data.
func (c *Codec) Unmarshal(data []byte, m proto.Message) error {
	proto.Reset(m)
	d := jsoncodec.Get(data, c.rules)
	defer jsoncodec.Put(d)
	g, generated := m.(jsoncodec.Message)
	decode := func() {
		if !d.Start() {
			return
		}
		if generated {
			g.DecodeJSONWire(d)
		} else {
			r := m.ProtoReflect()
			message(d, c.planOf(r.Descriptor()), r)
		}
		d.End()
	}
	if !generated {
		d.Slow()
	}
	decode()
	if generated && d.Bailed() { // a problem, or a form the scanner leaves to the tokenizer: read it again
		proto.Reset(m)
		d.Retry()
		decode()
	}
	return d.Err()
}

// IsObject reports whether body is, at first sight, a JSON object (its first byte past white
// space is '{'), whatever its Content-Type says: curl -d labels every body form-encoded.
func IsObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// message decodes an object into m: the protoreflect path, for messages without a generated
// codec, on the same decoder so that every problem is found and worded the same way.
func message(d *jsoncodec.Decoder, p *plan, m protoreflect.Message) {
	it := d.Object()
	var seen uint64
	for d.More(&it) {
		key := it.Key()
		f := p.byName[string(key)]
		if f == nil {
			if p.ignored[string(key)] {
				d.Skip()
			} else {
				d.UnknownKey(key, p.names)
			}
			continue
		}
		d.PushName(f.jsonName)
		switch t := d.Peek(); {
		case seen&f.bit != 0:
			d.Problem("appears more than once")
			d.Skip()
		case t == jx.Null:
			d.Null() // null leaves the field unset, as protojson does
		default:
			field(d, f, m, t)
		}
		seen |= f.bit
		d.Pop()
	}
	d.EndObject(&it)
}

func field(d *jsoncodec.Decoder, f *fieldPlan, m protoreflect.Message, t jx.Type) {
	switch {
	case f.fd.IsMap():
		mapField(d, f, m, t)
	case f.list:
		e, ok := d.ListOf(t, wanted(f.fd.Kind()), f.maxLen)
		if !ok {
			return
		}
		list := m.Mutable(f.fd).List()
		for t, ok := d.Next(&e); ok; t, ok = d.Next(&e) {
			if f.sub != nil {
				v := list.NewElement()
				object(d, f.sub, v.Message(), t)
				list.Append(v)
			} else if v, ok := scalar(d, f, t); ok {
				list.Append(v)
			}
		}
	case f.sub != nil:
		object(d, f.sub, m.Mutable(f.fd).Message(), t)
	default:
		if v, ok := scalar(d, f, t); ok {
			m.Set(f.fd, v)
		}
	}
}

// mapField decodes an object of string keys into a map field with scalar values (such as
// strand -> share). A key given twice is a problem, as a repeated field is.
func mapField(d *jsoncodec.Decoder, f *fieldPlan, m protoreflect.Message, t jx.Type) {
	value := f.sub.byName["value"] // a scalar: the plan is supported only then (scalarMap)
	if t != jx.Object {
		d.Problem("must be an object")
		d.Skip()
		return
	}
	mp := m.Mutable(f.fd).Map()
	it := d.Object()
	for d.More(&it) {
		key := protoreflect.ValueOfString(string(it.Key())).MapKey()
		d.PushKey(key.String())
		switch {
		case !utf8.Valid(it.Key()):
			// protojson refuses it too: it could not be written back (the path shows U+FFFD).
			d.Problem("a key must be valid UTF-8 text")
			d.Skip()
		case mp.Has(key):
			d.Problem("appears more than once")
			d.Skip()
		default:
			if v, ok := scalar(d, value, d.Peek()); ok {
				mp.Set(key, v)
			}
		}
		d.Pop()
	}
	d.EndObject(&it)
}

// object decodes a message value of JSON type t: an object, or for positional messages a number
// array.
func object(d *jsoncodec.Decoder, p *plan, m protoreflect.Message, t jx.Type) {
	switch {
	case t == jx.Object:
		message(d, p, m)
	case t == jx.Array && p.positional:
		positional(d, p, m)
	default:
		d.Problem("must be an object")
		d.Skip()
	}
}

func positional(d *jsoncodec.Decoder, p *plan, m protoreflect.Message) {
	values, ok := d.Positional(p.names)
	if !ok {
		return
	}
	for i, f := range p.fields {
		if f.fd.Kind() == protoreflect.FloatKind {
			m.Set(f.fd, protoreflect.ValueOfFloat32(float32(values[i])))
		} else {
			m.Set(f.fd, protoreflect.ValueOfFloat64(values[i]))
		}
	}
}

func scalar(d *jsoncodec.Decoder, f *fieldPlan, t jx.Type) (protoreflect.Value, bool) {
	switch kind := f.fd.Kind(); kind {
	case protoreflect.StringKind:
		s, ok := d.ReadString(t, f.numberAsText)
		return protoreflect.ValueOfString(s), ok
	case protoreflect.BoolKind:
		b, ok := d.ReadBool(t)
		return protoreflect.ValueOfBool(b), ok
	case protoreflect.FloatKind:
		v, ok := d.ReadFloat(t, true)
		return protoreflect.ValueOfFloat32(float32(v)), ok
	case protoreflect.DoubleKind:
		v, ok := d.ReadFloat(t, false)
		return protoreflect.ValueOfFloat64(v), ok
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, ok := d.ReadInt(t, math.MinInt64, math.MaxInt64)
		return protoreflect.ValueOfInt64(n), ok
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, ok := d.ReadInt(t, 0, math.MaxUint32)
		return protoreflect.ValueOfUint32(uint32(n)), ok
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, ok := d.ReadInt(t, 0, math.MaxInt64) // larger uint64 values are not used by this contract
		return protoreflect.ValueOfUint64(uint64(n)), ok
	}
	n, ok := d.ReadInt(t, math.MinInt32, math.MaxInt32)
	return protoreflect.ValueOfInt32(int32(n)), ok
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
