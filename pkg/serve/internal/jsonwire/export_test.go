package jsonwire

import (
	"bytes"

	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// unmarshalReflect is Unmarshal through the protoreflect path whatever m is: the reference the
// generated codecs are measured and tested against.
func (c *Codec) unmarshalReflect(data []byte, m proto.Message) error {
	proto.Reset(m)
	d := jsoncodec.Get(data, c.rules)
	defer jsoncodec.Put(d)
	d.Slow()
	if d.Start() {
		r := m.ProtoReflect()
		message(d, c.planOf(r.Descriptor()), r)
		d.End()
	}
	return d.Err()
}

// marshalReflect is Marshal through the protoreflect path.
func (c *Codec) marshalReflect(dst []byte, m proto.Message) ([]byte, error) {
	p := c.planOf(m.ProtoReflect().Descriptor())
	if !p.supported {
		return dst, ErrUnsupported
	}
	return appendMessage(dst, p, m.ProtoReflect())
}

// unmarshalTokenizer is Unmarshal through the generated codec on the tokenizer alone (no
// scanner's pass).
func (c *Codec) unmarshalTokenizer(body []byte, m proto.Message) error {
	proto.Reset(m)
	d := jsoncodec.Get(body, c.rules)
	defer jsoncodec.Put(d)
	d.Slow()
	if d.Start() {
		m.(jsoncodec.Message).DecodeJSONWire(d)
		d.End()
	}
	return d.Err()
}

// blank reports whether b is only JSON white space.
func blank(b []byte) bool { return len(bytes.TrimLeft(b, " \t\r\n")) == 0 }
