// Command protoc-gen-yardstick-json is a protoc plugin that writes, beside each .pb.go file of the
// contract, a JSON decoder and encoder for its messages (the *_json.pb.go files): plain Go that
// switches on each key, writes the generated struct's fields by name, and appends the answer's
// bytes, with no reflection and no unsafe. The code calls the run time in package jsoncodec
// (github.com/yardstick-dev/yardstick/proto/jsoncodec), which holds the wire rules' rare paths,
// so a service's rules are values it owns, read at run time, not baked into the generated code.
//
// Beside each message's JSON codec it writes DecodeProtoWire, a decoder of the message's protobuf
// binary encoding on the same run time (proto/jsoncodec/protowire.go: optional scalars and list
// elements from its arenas and chunks), for the gRPC side: it reads what an encoder writes for the
// type and leaves anything else (an unknown field, another wire type) to protobuf-go.
//
// A message gets a codec when every field is a string, bool, int32, int64 or double (single,
// optional or repeated), a message that gets one too, or a map from strings to such scalars; a
// message with anything else (a oneof, an enum, bytes, a well-known type, more than 64 fields) gets
// none, and the frame reads and writes it through protoreflect.
//
// make generate runs it through buf.gen.yaml; make tools builds it into bin/tools.
package main

import (
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/types/pluginpb"
)

func main() { protogen.Options{}.Run(run) }

// run generates the codecs of the files gen is asked for.
func run(gen *protogen.Plugin) error {
	gen.SupportedFeatures = uint64(pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL)
	s := newSupport()
	for _, f := range gen.Files {
		if f.Generate {
			generateFile(gen, f, s)
		}
	}
	return nil
}
