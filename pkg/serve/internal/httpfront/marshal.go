package httpfront

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
)

// marshaler is the JSON front's marshaler: jsonwire for the contract's messages (the wire rules,
// and answers byte-identical to protojson without its white space), protojson for any message
// jsonwire does not write.
type marshaler struct{ codec *jsonwire.Codec }

var fallback = protojson.MarshalOptions{EmitUnpopulated: true}

func (wm marshaler) ContentType(any) string { return "application/json" }

func (wm marshaler) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return json.Marshal(v)
	}
	// Sized for most answers at once: appending from nil grew the buffer three times a call.
	b, err := wm.codec.Marshal(make([]byte, 0, 512), m)
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

func (wm marshaler) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return json.Unmarshal(data, v)
	}
	return wm.codec.Unmarshal(data, m)
}

func (wm marshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return wm.Unmarshal(data, v)
	})
}

func (wm marshaler) NewEncoder(w io.Writer) runtime.Encoder {
	return runtime.EncoderFunc(func(v any) error {
		b, err := wm.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
}
