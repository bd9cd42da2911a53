package serve

import (
	"bytes"
	"encoding/json"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
)

// compactJSON is the JSON front's marshaler. protojson varies its whitespace from build to build
// on purpose; the front compacts what it writes so that every build answers byte for byte alike
// (callers' scripts, caches and documented examples can rely on it).
type compactJSON struct {
	runtime.JSONPb
}

func (c *compactJSON) Marshal(v any) ([]byte, error) {
	b, err := c.JSONPb.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(len(b))
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
