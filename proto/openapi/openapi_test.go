package openapi

import (
	"encoding/json"
	"testing"
)

func TestDocument(t *testing.T) {
	t.Parallel()
	for _, service := range []string{"scoring", "forecast"} {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			raw, err := Document(service, "v1.2.3-test")
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				OpenAPI string `json:"openapi"`
				Info    struct {
					Title   string `json:"title"`
					Version string `json:"version"`
				} `json:"info"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			if doc.Info.Version != "v1.2.3-test" {
				t.Errorf("info.version: got %q; want v1.2.3-test", doc.Info.Version)
			}
			if want := "Yardstick " + service + " API"; doc.Info.Title != want {
				t.Errorf("info.title: got %q; want %q", doc.Info.Title, want)
			}
			if doc.OpenAPI != "3.0.3" {
				t.Errorf("openapi: got %q; want 3.0.3", doc.OpenAPI)
			}
		})
	}
	if _, err := Document("nosuch", "dev"); err == nil {
		t.Error("Document(nosuch): got no error; want one")
	}
}
