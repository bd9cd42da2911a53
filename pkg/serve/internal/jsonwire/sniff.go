package jsonwire

import "bytes"

// IsObject reports whether body is, at first sight, a JSON object (its first byte past white
// space is '{'), whatever its Content-Type says: curl -d labels every body form-encoded.
func IsObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
