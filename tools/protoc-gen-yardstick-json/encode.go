package main

import (
	"strconv"

	"google.golang.org/protobuf/compiler/protogen"
)

// generateEncode writes m's AppendJSONWire: protojson's output with EmitUnpopulated, without white
// space. Fields are written in declaration order; an unset optional scalar is left out, an unset
// message is null, every other field is written with its zero value.
func generateEncode(g *protogen.GeneratedFile, m *protogen.Message) {
	g.P()
	g.P("// AppendJSONWire appends x as protojson with EmitUnpopulated writes it, without white space.")
	g.P("func (x *", m.GoIdent.GoName, ") AppendJSONWire(b []byte) ([]byte, error) {")
	g.P("if x == nil {")
	g.P("x = new(", m.GoIdent.GoName, ") // as protojson writes a nil message: every field unset")
	g.P("}")
	if needsErr(m) {
		g.P("var err error")
	}
	// Until a field that is always written has been, whether a comma goes first is known only at
	// run time (first); after it, always.
	needFirst := len(m.Fields) > 1 && presence(m.Fields[0])
	g.P("b = append(b, '{')")
	if needFirst {
		g.P("first := true")
	}
	settled := false
	for i, f := range m.Fields {
		key := strconv.Quote(f.Desc.JSONName()) + ":"
		if presence(f) {
			g.P("if x.", f.GoName, " != nil {")
		}
		switch {
		case i == 0:
			g.P("b = append(b, ", strconv.Quote(key), "...)")
		case settled:
			g.P("b = append(b, ", strconv.Quote(","+key), "...)")
		default:
			g.P("if !first {")
			g.P("b = append(b, ',')")
			g.P("}")
			g.P("b = append(b, ", strconv.Quote(key), "...)")
		}
		if needFirst && !settled && i < len(m.Fields)-1 {
			g.P("first = false")
		}
		encodeValue(g, f)
		if presence(f) {
			g.P("}")
		} else {
			settled = true
		}
	}
	g.P("return append(b, '}'), nil")
	g.P("}")
}

// needsErr reports whether m's encoder calls a writer that can fail (strings, messages, maps).
func needsErr(m *protogen.Message) bool {
	for _, f := range m.Fields {
		if f.Message != nil || f.Desc.IsMap() || kindName(f.Desc.Kind()) == "String" {
			return true
		}
	}
	return false
}

func check(g *protogen.GeneratedFile, call string) {
	g.P("if b, err = ", call, "; err != nil {")
	g.P("return b, err")
	g.P("}")
}

func encodeValue(g *protogen.GeneratedFile, f *protogen.Field) {
	x := "x." + f.GoName
	switch {
	case f.Desc.IsMap():
		w := g.QualifiedGoIdent(runtime.Ident("Write" + kindName(f.Desc.MapValue().Kind())))
		check(g, g.QualifiedGoIdent(runtime.Ident("AppendMap"))+"(b, "+x+", "+w+")")
	case f.Message != nil && f.Desc.IsList():
		check(g, g.QualifiedGoIdent(runtime.Ident("AppendMessages"))+"(b, "+x+")")
	case f.Message != nil:
		g.P("if ", x, " == nil {")
		g.P(`b = append(b, "null"...)`)
		g.P("} else if b, err = ", x, ".AppendJSONWire(b); err != nil {")
		g.P("return b, err")
		g.P("}")
	case f.Desc.IsList() && kindName(f.Desc.Kind()) == "String":
		check(g, g.QualifiedGoIdent(runtime.Ident("AppendStrings"))+"(b, "+x+")")
	case f.Desc.IsList():
		g.P("b = ", runtime.Ident("AppendList"), "(b, ", x, ", ", runtime.Ident("Append"+kindName(f.Desc.Kind())), ")")
	case kindName(f.Desc.Kind()) == "String":
		v := x
		if presence(f) {
			v = "*" + x
		}
		check(g, g.QualifiedGoIdent(runtime.Ident("AppendString"))+"(b, "+v+")")
	default:
		v := x
		if presence(f) {
			v = "*" + x
		}
		g.P("b = ", runtime.Ident("Append"+kindName(f.Desc.Kind())), "(b, ", v, ")")
	}
}
