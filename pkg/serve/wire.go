package serve

import (
	"maps"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
)

// WireRules are a service's JSON rules beyond protojson's, by message full name
// (docs/migrating.md lists the contract's): Aliases are extra spellings of a field (alias → JSON
// name); Ignored are fields accepted and dropped (extras an older API's callers send); Positional
// messages also arrive as an array of their fields' values; NumberAsText are string fields that
// also take a JSON number, kept as its text. The frame adds its own messages' rules and applies
// them to every body, batch record and gRPC message it decodes.
// ListLimits (message → list field's JSON name → limit) and MaxListLen (any other list; 0: none)
// end decoding one entry past a list's limit: a million empty entries cost the limit's worth.
type WireRules = jsonwire.Options

// frameWire are the rules of the frame's own messages: the token request's clientID, as callers
// of the original API spell it.
var frameWire = WireRules{
	Aliases: map[protoreflect.FullName]map[string]string{"yardstick.auth.v1.IssueTokenRequest": {"clientID": "clientId"}},
}

// newWireCodec is a server's JSON codec: the service's wire rules with the frame's.
func newWireCodec(r WireRules) *jsonwire.Codec {
	r.Aliases = union(r.Aliases, frameWire.Aliases)
	r.Ignored = union(r.Ignored, frameWire.Ignored)
	r.Positional = union(r.Positional, frameWire.Positional)
	r.NumberAsText = union(r.NumberAsText, frameWire.NumberAsText)
	return jsonwire.New(r)
}

// union is the service's rules and the frame's in one map, the frame's winning; nil when empty.
func union[V any](service, frame map[protoreflect.FullName]V) map[protoreflect.FullName]V {
	if len(service)+len(frame) == 0 {
		return nil
	}
	out := make(map[protoreflect.FullName]V, len(service)+len(frame))
	maps.Copy(out, service)
	maps.Copy(out, frame)
	return out
}
