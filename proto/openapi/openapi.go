// Package openapi serves the OpenAPI 3.0 document of each service: scoring.openapi.json and
// forecast.openapi.json beside this file, written by `make generate` (internal/gen) from the
// Swagger 2.0 that protoc-gen-openapiv2 generates from the .proto files and from overlay.yaml.
// Each document holds the service's own paths and the token endpoint every service has.
package openapi

import (
	"embed"
	"encoding/json"
	"fmt"
)

//go:embed *.openapi.json
var files embed.FS

// Document returns the OpenAPI document of one service ("scoring" or "forecast") with
// info.version set to the build's version.
func Document(service, version string) ([]byte, error) {
	raw, err := files.ReadFile(service + ".openapi.json")
	if err != nil {
		return nil, fmt.Errorf("openapi document of %q: %w", service, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse openapi document of %q: %w", service, err)
	}
	info, ok := doc["info"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("openapi document of %q has no info", service)
	}
	info["version"] = version
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode openapi document of %q: %w", service, err)
	}
	return out, nil
}
