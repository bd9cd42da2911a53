package jsonwire

import (
	"errors"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// ErrUnsupported is Marshal's error for a message it does not write: the caller uses protojson.
var ErrUnsupported = errors.New("jsonwire: message kind not supported")

// Marshal appends m's JSON to dst: what protojson with EmitUnpopulated writes, without white
// space (unset proto3-optional fields left out, other unset messages null, the rest with zero
// values).
func (c *Codec) Marshal(dst []byte, m proto.Message) ([]byte, error) {
	if g, ok := m.(jsoncodec.Message); ok {
		return g.AppendJSONWire(dst)
	}
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

// appendMap writes a map of string keys and scalar values as protojson does: keys sorted.
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
		if b, err = jsoncodec.AppendString(b, k); err != nil {
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
		return jsoncodec.AppendString(b, v.String())
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
		return jsoncodec.AppendFloat(b, float32(v.Float())), nil
	case protoreflect.DoubleKind:
		return jsoncodec.AppendDouble(b, v.Float()), nil
	}
	return b, ErrUnsupported
}
