package grpcguard

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// The repository's generated decoder checks what wellFormed checked, as it reads: these tests hold
// the one pass to the two it replaced (wellFormed, then the decoder), verdict for verdict and
// message for message.

// twoPasses is the guard's decoding before the one pass: wellFormed, then the generated decoder.
func twoPasses(mt protoreflect.MessageType, b []byte) (proto.Message, bool) {
	m := mt.New().Interface()
	if !wellFormed(mt.Descriptor(), b) {
		return m, false
	}
	if jsoncodec.DecodeProto(m.(jsoncodec.ProtoMessage), b) != nil {
		proto.Reset(m)
		return m, false
	}
	return m, true
}

// onePass is the guard's decoding now (decodeGenerated).
func onePass(mt protoreflect.MessageType, b []byte) (proto.Message, bool) {
	m := mt.New().Interface()
	return m, decodeGenerated(m, b)
}

// TestOnePassMatchesTwoPasses: on 20,000 messages of every contract type the repository's decoder
// takes, valid (as protobuf-go writes them, or their lists one by one) and damaged (bytes
// flipped, unknown fields, other wire types, strings and map keys not UTF-8, damage nested
// inside a nested message, cut short), the one pass accepts exactly what the two passes accepted
// and decodes the same message; what it refuses leaves the message empty.
func TestOnePassMatchesTwoPasses(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 41))
	var types []protoreflect.MessageType
	for _, mt := range contractTypes(t) {
		if _, ok := mt.New().Interface().(jsoncodec.ProtoMessage); ok {
			types = append(types, mt)
		}
	}
	if len(types) < 60 {
		t.Fatalf("%d types with the repository's decoder; want at least 60", len(types))
	}
	verdicts := map[string][2]int{} // by damage: refused, accepted
	for i := range 20000 {
		mt := types[i%len(types)]
		kind, b := damaged(t, r, mt.Descriptor(), encoded(t, r, mt), 0)
		old, oldOK := twoPasses(mt, b)
		got, ok := onePass(mt, b)
		name := string(mt.Descriptor().FullName()) + " " + kind
		switch {
		case ok != oldOK:
			t.Fatalf("%s (% x): one pass accepted %v; two passes %v", name, b, ok, oldOK)
		case !proto.Equal(got, old) || !sameMessage(got, old):
			t.Fatalf("%s (% x):\none pass   %v\ntwo passes %v", name, b, got, old)
		case !ok && proto.Size(got) != 0:
			t.Fatalf("%s (% x): refused, and the message holds %v; want it empty", name, b, got)
		}
		v := verdicts[kind]
		v[map[bool]int{false: 0, true: 1}[ok]]++
		verdicts[kind] = v
	}
	// Each kind of damage was refused some of the time (a flipped byte may leave a valid message),
	// and valid messages always accepted: both verdicts were compared.
	for _, kind := range []string{"flipped", "unknown field", "other wire type", "not UTF-8", "cut short", "nested"} {
		if verdicts[kind][0] < 50 {
			t.Errorf("%s: %v refused, accepted; want at least 50 refused", kind, verdicts[kind])
		}
	}
	if v := verdicts["valid"]; v[0] != 0 || v[1] < 2000 {
		t.Errorf("valid: %v refused, accepted; want none refused, at least 2,000 accepted", v)
	}
}

// encoded is a random message of type mt as protobuf-go writes it, or with its lists of numbers
// one by one.
func encoded(t *testing.T, r *rand.Rand, mt protoreflect.MessageType) []byte {
	m := mt.New()
	fill(r, m, 0)
	b, err := proto.Marshal(m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	if r.IntN(2) == 0 {
		b = unpack(t, b, mt.Descriptor())
	}
	return b
}

// damaged is b, a message of type md, with one kind of damage done to it (or none: "valid").
func damaged(t *testing.T, r *rand.Rand, md protoreflect.MessageDescriptor, b []byte, depth int) (string, []byte) {
	out := bytes.Clone(b)
	fields := md.Fields()
	field := func() protoreflect.FieldDescriptor { return fields.Get(r.IntN(fields.Len())) }
	damage := r.IntN(7)
	if fields.Len() == 0 && damage >= 2 && damage != 4 {
		damage = 1 // no field to damage: an unknown one
	}
	switch damage {
	case 0:
		for k := 1 + r.IntN(3); k > 0 && len(out) > 0; k-- {
			out[r.IntN(len(out))] ^= byte(1 + r.IntN(255))
		}
		return "flipped", out
	case 1:
		num := protowire.Number(fields.Len() + 1 + r.IntN(3000)) // the contract numbers its fields 1 to n
		if fields.ByNumber(num) != nil {
			return "valid", out
		}
		return "unknown field", appendValue(r, out, num, protowire.Type(r.IntN(6)))
	case 2:
		fd := field()
		typ := protowire.Type(r.IntN(8))
		if typ == wireOf(fd) || typ == protowire.BytesType && fd.IsList() && fd.Message() == nil && fd.Kind() != protoreflect.StringKind {
			return "valid", out
		}
		return "other wire type", appendValue(r, out, fd.Number(), typ)
	case 3:
		fd := field()
		switch {
		case fd.IsMap():
			entry := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte{'k', 0xc3})
			return "not UTF-8", protowire.AppendBytes(protowire.AppendTag(out, fd.Number(), protowire.BytesType), entry)
		case fd.Kind() == protoreflect.StringKind:
			return "not UTF-8", protowire.AppendBytes(protowire.AppendTag(out, fd.Number(), protowire.BytesType), []byte{'L', 0xff, '1'})
		}
		return "valid", out
	case 4:
		if len(out) == 0 {
			return "valid", out
		}
		return "cut short", out[:r.IntN(len(out))]
	case 5:
		fd := field()
		if fd.Message() == nil || depth > 3 {
			return "valid", out
		}
		if fd.IsMap() { // an entry with another field, or its value of another wire type
			entry := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("k"))
			entry = appendValue(r, entry, protowire.Number(2+r.IntN(2)), protowire.Type(r.IntN(6)))
			return "nested", protowire.AppendBytes(protowire.AppendTag(out, fd.Number(), protowire.BytesType), entry)
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(fd.Message().FullName())
		if err != nil {
			t.Fatal(err)
		}
		_, inner := damaged(t, r, fd.Message(), encoded(t, r, mt), depth+1)
		return "nested", protowire.AppendBytes(protowire.AppendTag(out, fd.Number(), protowire.BytesType), inner)
	}
	return "valid", out
}

// appendValue appends field num of wire type typ with a value of that type (a group's start alone).
func appendValue(r *rand.Rand, b []byte, num protowire.Number, typ protowire.Type) []byte {
	b = protowire.AppendTag(b, num, typ)
	switch typ {
	case protowire.VarintType:
		return protowire.AppendVarint(b, r.Uint64()>>r.IntN(64))
	case protowire.Fixed64Type:
		return protowire.AppendFixed64(b, r.Uint64())
	case protowire.BytesType:
		return protowire.AppendBytes(b, []byte(strconv.Itoa(r.IntN(1000))))
	case protowire.Fixed32Type:
		return protowire.AppendFixed32(b, r.Uint32())
	}
	return b
}

// node is a message that holds itself, decoded as the plugin writes a decoder (the contract has
// none, so its depth is bounded by its types): a child (1), tags (2, a map), a name (3) and
// children (4).
type node struct {
	child    *node
	tags     map[string]string
	name     string
	children []*node
}

var nodePool jsoncodec.Pool[node]

func (x *node) DecodeProtoWire(d *jsoncodec.ProtoDecoder, b []byte) error {
	for len(b) > 0 {
		num, typ, n := jsoncodec.ProtoTag(b)
		if n < 0 {
			return jsoncodec.ErrProtoWire
		}
		b = b[n:]
		switch num {
		case 1:
			if x.child == nil {
				x.child = new(node)
			}
			n = d.Message(x.child, b, typ)
		case 2:
			n = jsoncodec.ProtoMap(d, &x.tags, b, typ, (*jsoncodec.ProtoDecoder).String)
		case 3:
			x.name, n = d.String(b, typ)
		case 4:
			x.children, n = jsoncodec.ProtoMessages[node, *node](d, x.children, b, num, typ, &nodePool)
		default:
			return jsoncodec.ErrProtoWire
		}
		if n < 0 {
			return jsoncodec.ErrProtoWire
		}
		b = b[n:]
	}
	return nil
}

// nodeDescriptor is node's descriptor, for wellFormed.
func nodeDescriptor(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	str, msg := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	opt, rep := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	field := func(name string, num int32, typ *descriptorpb.FieldDescriptorProto_Type, label *descriptorpb.FieldDescriptorProto_Label, of string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(num), Type: typ, Label: label}
		if of != "" {
			f.TypeName = proto.String(of)
		}
		return f
	}
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("node.proto"), Package: proto.String("onepass"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Node"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("child", 1, msg, opt, ".onepass.Node"), field("tags", 2, msg, rep, ".onepass.Node.TagsEntry"),
				field("name", 3, str, opt, ""), field("children", 4, msg, rep, ".onepass.Node"),
			},
			NestedType: []*descriptorpb.DescriptorProto{{
				Name:    proto.String("TagsEntry"),
				Field:   []*descriptorpb.FieldDescriptorProto{field("key", 1, str, opt, ""), field("value", 2, str, opt, "")},
				Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
			}},
		}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().Get(0)
}

// TestOnePassDepth: a message nested jsoncodec.MaxProtoDepth (100) deep is read, one deeper is
// left to protobuf-go, by a child field, a list of children and a map's entry (a message one
// deeper than its own), as wellFormed left it.
func TestOnePassDepth(t *testing.T) {
	t.Parallel()
	md := nodeDescriptor(t)
	nest := func(depth int, num protowire.Number, inner []byte) []byte { // inner at depth
		for range depth {
			inner = protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), inner)
		}
		return inner
	}
	tag := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("k")))
	name := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), []byte("é"))
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"a child at 100", nest(100, 1, nil), true},
		{"a child at 101", nest(101, 1, nil), false},
		{"a named child at 100", nest(100, 1, name), true},
		{"a list's child at 100", nest(100, 4, nil), true},
		{"a list's child at 101", nest(101, 4, nil), false},
		{"a map at 99 (its entry at 100)", nest(99, 1, tag), true},
		{"a map at 100 (its entry at 101)", nest(100, 1, tag), false},
		{"a name not UTF-8 at 50", nest(50, 4, protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), []byte{0xe9})), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := wellFormed(md, tc.b); got != tc.want {
				t.Errorf("wellFormed: got %v; want %v", got, tc.want)
			}
			if got := jsoncodec.DecodeProto(new(node), tc.b) == nil; got != tc.want {
				t.Errorf("one pass: got %v; want %v", got, tc.want)
			}
		})
	}
}
