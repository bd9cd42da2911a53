// Package openapi serves the OpenAPI (Swagger 2.0) documents generated from the contract: one
// document per service, the service's own paths merged with the token endpoint every service has.
package openapi

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
)

//go:embed yardstick/*/v1/*.swagger.json
var files embed.FS

// Document returns the OpenAPI document of one service ("scoring" or "forecast"): its paths and
// the token endpoint's, with their definitions, titled for the service.
func Document(service, version string) ([]byte, error) {
	merged := map[string]any{}
	paths := map[string]any{}
	defs := map[string]any{}
	for _, name := range []string{"auth", service} {
		raw, err := files.ReadFile(fmt.Sprintf("yardstick/%s/v1/%s.swagger.json", name, name))
		if err != nil {
			return nil, fmt.Errorf("openapi document of %q: %w", name, err)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("parse openapi document of %q: %w", name, err)
		}
		for k, v := range doc {
			if _, ok := merged[k]; !ok {
				merged[k] = v
			}
		}
		mergeInto(paths, doc["paths"])
		mergeInto(defs, doc["definitions"])
	}
	merged["paths"] = paths
	merged["definitions"] = defs
	merged["info"] = map[string]any{"title": "Yardstick " + service, "version": version}
	delete(merged, "tags")
	return json.MarshalIndent(merged, "", "  ")
}

func mergeInto(dst map[string]any, src any) {
	m, _ := src.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		dst[k] = m[k]
	}
}
