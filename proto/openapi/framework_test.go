package openapi

import (
	"encoding/json"
	"testing"
)

// An operator's bundle names its own frameworks (docs/content.md): a document that listed the
// demonstration bundle's frameworks as the only values would make generated clients refuse them.
func TestFrameworkIsOpen(t *testing.T) {
	t.Parallel()
	for _, service := range []string{"scoring", "forecast"} {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			raw, err := Document(service, "dev")
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Components struct {
					Schemas map[string]struct {
						Properties map[string]struct {
							Type string `json:"type"`
							Enum []any  `json:"enum"`
						} `json:"properties"`
					} `json:"schemas"`
				} `json:"components"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			seen := 0
			for name, schema := range doc.Components.Schemas {
				if p, ok := schema.Properties["framework"]; ok {
					seen++
					if len(p.Enum) > 0 || p.Type != "string" {
						t.Errorf("%s.framework: got type %q enum %v; want an open string", name, p.Type, p.Enum)
					}
				}
			}
			if seen == 0 {
				t.Errorf("got no schema with a framework property; want some")
			}
		})
	}
}
