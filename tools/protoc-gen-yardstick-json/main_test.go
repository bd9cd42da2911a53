package main

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

var update = flag.Bool("update", false, "rewrite testdata/example_json.pb.go.golden")

// TestGolden: the codecs generated for testdata/example.proto are the golden file's, byte for byte
// (go test -update rewrites it); the messages with a oneof, an enum, or a field of a message
// without a codec get none. The contract's own output is held by make check-generate, and its
// behaviour by jsonwire's differential and fuzz tests (JSON) and grpcguard's
// TestDecodeMatchesProtobufGo and FuzzDecode (DecodeProtoWire, against protobuf-go).
func TestGolden(t *testing.T) {
	t.Parallel()
	compiler := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{"testdata"}})}
	files, err := compiler.Compile(context.Background(), "example.proto")
	if err != nil {
		t.Fatal(err)
	}
	req := &pluginpb.CodeGeneratorRequest{
		FileToGenerate: []string{"example.proto"},
		Parameter:      proto.String("paths=source_relative"),
		ProtoFile:      []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(files[0])},
	}
	gen, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(gen); err != nil {
		t.Fatal(err)
	}
	resp := gen.Response()
	if resp.Error != nil || len(resp.File) != 1 || resp.File[0].GetName() != "example_json.pb.go" {
		t.Fatalf("got error %v and %d files; want example_json.pb.go alone", resp.Error, len(resp.File))
	}
	got := resp.File[0].GetContent()
	const golden = "testdata/example_json.pb.go.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("generated code differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
	for _, name := range []string{"Item", "Point", "Request", "Empty"} {
		if !strings.Contains(got, "func (x *"+name+") DecodeJSONWire(") || !strings.Contains(got, "func (x *"+name+") AppendJSONWire(") ||
			!strings.Contains(got, "func (x *"+name+") DecodeProtoWire(") {
			t.Errorf("%s: no codec; want one", name)
		}
	}
	for _, name := range []string{"WithOneof", "HoldsOneof", "WithEnum"} {
		if strings.Contains(got, "func (x *"+name+")") {
			t.Errorf("%s: a codec; want none", name)
		}
	}
	if !strings.Contains(got, "func (x *Point) DecodeJSONWirePositional(") || strings.Contains(got, "func (x *Item) DecodeJSONWirePositional(") {
		t.Error("positional decoding: want it for Point (all doubles) alone")
	}
}
