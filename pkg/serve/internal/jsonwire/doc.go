// Package jsonwire is the JSON front's codec: it decodes request bodies into the contract's
// protobuf messages and encodes answers, byte for byte as protojson (EmitUnpopulated) followed by
// whitespace stripping would, at a fraction of the cost.
//
// Decoding applies the wire rules of the original API's clients, identically for every message:
//   - an unknown field is an error that names it and suggests the nearest known one
//     (`unknown field "cont"; did you mean "count"?`), except fields a message is told to ignore;
//   - a duplicate key, trailing data after the object, or a body that is not one JSON object is an
//     error;
//   - whole-number fields (int32, int64, ...) take whole JSON numbers only (2 and 2.0, not 2.5);
//     floating-point fields take any JSON number; both also take a quoted number, as protojson does;
//   - aliases (`clientID` for `clientId`) and positional arrays (`[a, b, c]` for a message whose
//     fields are all numbers) are per-message options;
//   - every problem is reported with the element path of the field (`items[3].result`), up to a
//     bound, not only the first; past the bound a body costs no more to read (no names, no
//     suggestions), and a list ends one entry past its limit (Options.ListLimits).
//
// For the contract's generated messages decoding skips protoreflect: it writes the generated
// structs directly at field offsets that package layout finds and verifies once per type, takes
// optional scalars from arenas and list elements from chunks it keeps across requests
// (fastdecode.go), and lets strings share the body's memory. Setting the same fields through
// protoreflect allocated a pointer per optional scalar and per element (a 40-item request: ≈ 250
// allocations against ≈ 10). A message whose struct layout does not verify (the Opaque API, any
// shape not seen before) is decoded through protoreflect, with the same answers. (The gRPC side
// decodes the protobuf encoding with vtprotobuf's generated code: internal/grpcguard.)
//
// Why not protojson: on the JSON front it was the wall (reflection-driven decoding of each body,
// then a second pass to strip the whitespace protojson adds on purpose). Why go-faster/jx: a
// maintained, allocation-free JSON tokenizer with strict RFC 8259 validation, so this package only
// maps tokens onto message fields. Numbers take Clinger's exact path before strconv (number.go):
// without it a 40-item body costs 15% more instructions to decode. The encoder writes bytes
// directly, with protojson's number and string formatting; a differential test holds it to
// protojson's output.
package jsonwire
