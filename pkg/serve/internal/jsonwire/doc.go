// Package jsonwire is the JSON front's codec: it decodes request bodies into the contract's
// protobuf messages and encodes answers, byte for byte as protojson (EmitUnpopulated) followed by
// whitespace stripping would, at a fraction of the cost.
//
// Decoding applies the wire rules of the original API's clients, identically for every message:
//   - an unknown field is an error that names it and suggests the nearest known one
//     (`unknown field "cont"; did you mean "count"?`), except fields a message is told to ignore;
//   - a duplicate key, trailing data, or a body that is not one JSON object is an error;
//   - whole-number fields (int32, int64, ...) take whole JSON numbers only (2 and 2.0, not 2.5);
//     floating-point fields take any JSON number; both also take a quoted number, as protojson does;
//   - aliases (`clientID` for `clientId`) and positional arrays (`[a, b, c]` for a message whose
//     fields are all numbers) are per-message options;
//   - every problem is reported with the element path of the field (`items[3].result`), up to a
//     bound, not only the first; past the bound a body costs no more to read (no names, no
//     suggestions), and a list ends one entry past its limit (Options.ListLimits).
//
// The contract's messages carry codecs that protoc-gen-yardstick-json (tools/, make generate)
// writes beside each .pb.go file in plain Go: DecodeJSONWire sets the struct's fields by key,
// AppendJSONWire appends the answer. They run on package jsoncodec (proto/jsoncodec): the
// tokenizing (a scanner for the common body, go-faster/jx for the rest), the problems and their
// paths, the number rules, and the Options as Rules. Any other message (dynamicpb, the Opaque
// API, a type outside the contract, a message with a oneof) is read and written through
// protoreflect on the same jsoncodec.Decoder, with the same answers (the differential and fuzz
// tests hold both paths and protojson to each other).
//
// Why not protojson: on the JSON front it was the wall (reflection on each body, then a second
// pass to strip the whitespace it adds on purpose). Why go-faster/jx: a maintained,
// allocation-free tokenizer with strict RFC 8259 validation that words every problem.
package jsonwire
