package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// indent writes raw indented by two spaces with a final newline; raw must be one JSON value.
func indent(dst *bytes.Buffer, raw []byte) error {
	if err := json.Indent(dst, bytes.TrimSpace(raw), "", "  "); err != nil {
		return fmt.Errorf("not JSON (%w): %.200q", err, raw)
	}
	dst.WriteByte('\n')
	return nil
}
