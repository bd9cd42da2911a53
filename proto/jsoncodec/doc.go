// Package jsoncodec is the run time of the contract's generated JSON codecs: what the code that
// protoc-gen-yardstick-json writes beside each .pb.go file (the *_json.pb.go files) calls to read
// and write JSON under the serving frame's wire rules.
//
// It lives in the proto module because the generated code does: a package of the serving frame
// (pkg/serve/internal/...) cannot be imported from here. The frame's codec (jsonwire) drives it:
// it gives a Decoder the body and the Rules, and calls the generated methods (Message) of the
// contract's types; messages without generated methods are read through protoreflect on the same
// Decoder, so both paths report the same problems in the same words.
//
// The rules, identically for every message:
//   - an unknown field is a problem that names it and suggests the nearest known one
//     (`unknown field "cont"; did you mean "count"?`), except fields a message is told to ignore;
//   - a duplicate key, or trailing data after the object, is a problem;
//   - whole-number fields take whole JSON numbers only (2 and 2.0, not 2.5); floating-point fields
//     take any JSON number; both also take a quoted number, as protojson does;
//   - aliases, ignored fields, positional arrays and numbers as text are per-message Rules, read at
//     run time on the rare path (an unknown key, an array where an object was expected, a number
//     for a text field), so the generated code does not change when a service's rules do;
//   - every problem carries the element path of the field (`items[3].result`), up to MaxProblems;
//     past that bound a body costs no more to read, and a list ends one entry past its limit.
//
// A first pass scans the body directly and takes only the common body (no escape, no problem of
// any kind, scan.go); at anything else it bails, and the body is read again with go-faster/jx, a
// maintained, allocation-free tokenizer with strict RFC 8259 validation, which finds and words
// every problem. Strings that lie in the body as written are cut from one copy of the body made
// for the request (no copy per string, and no unsafe); optional scalars come from arenas and list
// elements from chunks that a Decoder and a Pool keep across requests, so a 40-item request costs a
// few allocations, not one per field.
//
// The gRPC side decodes the contract's protobuf encoding on the same arenas and chunks
// (ProtoDecoder, DecodeProto; the generated DecodeProtoWire methods), for messages its caller has
// found well formed (protowire.go).
package jsoncodec
