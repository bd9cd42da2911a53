// Package layout finds where the fields of a contract message lie in its generated Go struct, and
// reads and writes them there. It is the serving frame's only package that imports unsafe.
//
// The gRPC side's protobuf fast decoder (jsonwire's protodecode.go; the JSON front's codecs are
// generated and need none of this) writes the generated structs at field offsets instead of
// through protoreflect, which allocates a pointer per optional scalar and per list element. Such
// writes are right only for the struct shape they were written for, so Of verifies that shape,
// once per message type, and refuses any other: the struct must be protoc-gen-go's open API
// (`protogen:"open.v1"`), hold exactly the message's fields plus protobuf-go's three internal ones,
// keep each optional scalar behind a pointer and each message field as a pointer to its registered
// type. The Opaque API (the default from edition 2024) hides its fields and records presence in a
// bitmap; its structs, and any shape a future protoc-gen-go may produce, are refused, and the
// codec decodes those messages through protoreflect instead.
package layout
