package httpfront

import (
	"bytes"
	"encoding/json"
	"errors"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
)

// fallback writes the answers jsonwire does not.
var fallback = protojson.MarshalOptions{EmitUnpopulated: true}

// marshal is an answer's JSON: jsonwire's for the contract's messages (byte for byte protojson's
// without its white space), protojson's for any message jsonwire does not write.
func marshal(codec *jsonwire.Codec, v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return json.Marshal(v)
	}
	// Sized for most answers at once: appending from nil grew the buffer three times a call.
	b, err := codec.Marshal(make([]byte, 0, 512), m)
	if !errors.Is(err, jsonwire.ErrUnsupported) {
		return b, err
	}
	if b, err = fallback.Marshal(m); err != nil {
		return nil, err
	}
	// protojson varies its whitespace from build to build on purpose; the front answers byte for
	// byte alike in every build.
	var compact bytes.Buffer
	err = json.Compact(&compact, b)
	return compact.Bytes(), err
}
