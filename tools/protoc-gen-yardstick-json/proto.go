package main

import (
	"strconv"

	"google.golang.org/protobuf/compiler/protogen"
)

// generateProtoDecode writes m's DecodeProtoWire: a switch on each field number that calls the
// run time's reader for the field's kind (jsoncodec/protowire.go), whose second answer is the
// value's length, < 0 for anything the run time leaves to protobuf-go (another wire type, a string
// not UTF-8, nesting past jsoncodec.MaxProtoDepth); a field number the message does not know is
// ErrProtoWire here. So the one pass over the bytes both checks and decodes them.
func generateProtoDecode(g *protogen.GeneratedFile, m *protogen.Message) {
	g.P()
	g.P("// DecodeProtoWire merges b, ", m.GoIdent.GoName, "'s binary encoding, into x; ErrProtoWire (x half decoded)")
	g.P("// for bytes protobuf-go must read: an unknown field, another wire type, a string not UTF-8,")
	g.P("// nesting too deep.")
	g.P("func (x *", m.GoIdent.GoName, ") DecodeProtoWire(d *", runtime.Ident("ProtoDecoder"), ", b []byte) error {")
	if len(m.Fields) == 0 {
		g.P("if len(b) > 0 {")
		g.P("return ", runtime.Ident("ErrProtoWire"), " // a field it does not know")
		g.P("}")
		g.P("return nil")
		g.P("}")
		return
	}
	g.P("for len(b) > 0 {")
	g.P("num, typ, n := ", runtime.Ident("ProtoTag"), "(b)")
	g.P("if n < 0 {")
	g.P("return ", runtime.Ident("ErrProtoWire"))
	g.P("}")
	g.P("b = b[n:]")
	g.P("switch num {")
	for _, f := range m.Fields {
		g.P("case ", strconv.Itoa(int(f.Desc.Number())), ":")
		protoValue(g, f)
	}
	g.P("default:")
	g.P("return ", runtime.Ident("ErrProtoWire"))
	g.P("}")
	g.P("if n < 0 {")
	g.P("return ", runtime.Ident("ErrProtoWire"))
	g.P("}")
	g.P("b = b[n:]")
	g.P("}")
	g.P("return nil")
	g.P("}")
}

func protoValue(g *protogen.GeneratedFile, f *protogen.Field) {
	x := "x." + f.GoName
	switch {
	case f.Desc.IsMap():
		g.P("n = ", runtime.Ident("ProtoMap"), "(d, &", x, ", b, typ, (*", runtime.Ident("ProtoDecoder"), ").", kindName(f.Desc.MapValue().Kind()), ")")
	case f.Message != nil && f.Desc.IsList():
		elem := g.QualifiedGoIdent(f.Message.GoIdent)
		pool := g.QualifiedGoIdent(protogen.GoIdent{GoName: poolVar(f.Message), GoImportPath: f.Message.GoIdent.GoImportPath})
		g.P(x, ", n = ", runtime.Ident("ProtoMessages"), "[", elem, ", *", elem, "](d, ", x, ", b, num, typ, &", pool, ")")
	case f.Message != nil:
		g.P("if ", x, " == nil {")
		g.P(x, " = new(", f.Message.GoIdent, ")")
		g.P("}")
		g.P("n = d.Message(", x, ", b, typ)")
	case f.Desc.IsList():
		g.P(x, ", n = d.", kindName(f.Desc.Kind()), "s(", x, ", b, typ)")
	case presence(f):
		g.P(x, ", n = d.Opt", kindName(f.Desc.Kind()), "(b, typ)")
	default:
		g.P(x, ", n = d.", kindName(f.Desc.Kind()), "(b, typ)")
	}
}
