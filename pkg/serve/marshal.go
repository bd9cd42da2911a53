package serve

import (
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
)

// compactJSON is the JSON front's marshaler. protojson varies its whitespace from build to build
// on purpose; the front removes it so that every build answers byte for byte alike (callers'
// scripts, caches and the documented examples can rely on it).
type compactJSON struct {
	runtime.JSONPb
}

func (c *compactJSON) Marshal(v any) ([]byte, error) {
	b, err := c.JSONPb.Marshal(v)
	if err != nil {
		return nil, err
	}
	return stripSpace(b), nil
}

// stripSpace removes, in place, the whitespace outside strings of a valid JSON document. It is
// json.Compact without the validation (protojson's output is valid), several times faster on the
// 15 MB answer of a 100,000-student group.
func stripSpace(b []byte) []byte {
	out := b[:0]
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			continue
		}
		out = append(out, c)
	}
	return out
}
