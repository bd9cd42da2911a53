package grpcguard

import (
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// unknownFields reports the fields of a gRPC request that the contract does not know (protobuf
// keeps them aside as unknown bytes), with their element paths: an unknown field is a 400 on the
// JSON front, and the same mistake must not pass silently over gRPC (a client built from a newer
// or older .proto than the server's). Paths are built only when something is found.
func (g *Guard) unknownFields(p *rpcerr.Problems, req any) {
	m, ok := req.(proto.Message)
	if !ok || !g.wire.HasUnknown(m) {
		return
	}
	walkUnknown(p, "", m.ProtoReflect())
}

func walkUnknown(p *rpcerr.Problems, path string, m protoreflect.Message) {
	for raw := m.GetUnknown(); len(raw) > 0; {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			p.Add(path, "malformed unknown field data")
			return
		}
		raw = raw[n:]
		m := protowire.ConsumeFieldValue(num, typ, raw)
		if m < 0 {
			p.Add(path, "malformed unknown field data")
			return
		}
		raw = raw[m:]
		p.Add(path, "unknown field number %d", num)
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil || fd.IsMap() {
			return true
		}
		name := fd.JSONName()
		if path != "" {
			name = path + "." + name
		}
		if fd.IsList() {
			list := v.List()
			for i := 0; i < list.Len(); i++ {
				walkUnknown(p, name+"["+strconv.Itoa(i)+"]", list.Get(i).Message())
			}
			return true
		}
		walkUnknown(p, name, v.Message())
		return true
	})
}
