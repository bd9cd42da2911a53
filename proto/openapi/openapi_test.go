package openapi

import (
	"encoding/json"
	"regexp"
	"strings"
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

// TestDocumentsSpeakHTTP: each document describes its own service (the forecast document once
// carried the scoring description), and the tag texts Swagger UI shows above each group of paths
// speak HTTP/JSON — statuses and JSON field names — not the gRPC codes and proto field names of
// the .proto comments they replace.
func TestDocumentsSpeakHTTP(t *testing.T) {
	t.Parallel()
	firstParagraph := map[string]string{
		"scoring":  "Computes a student's measure (an ability with its uncertainty) from test results",
		"forecast": "Forecasts a student's future measure",
	}
	grpcWords := regexp.MustCompile(`\b(INVALID_ARGUMENT|UNAUTHENTICATED|PERMISSION_DENIED|RESOURCE_EXHAUSTED|UNAVAILABLE|INTERNAL|rpc|[a-z]+_[a-z_]+)\b|google\.rpc`)
	for service, want := range firstParagraph {
		raw, err := Document(service, "dev")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Info struct {
				Description string `json:"description"`
			} `json:"info"`
			Tags []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"tags"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(doc.Info.Description, want) {
			t.Errorf("%s: info.description starts %.80q; want %q", service, doc.Info.Description, want)
		}
		if len(doc.Tags) == 0 {
			t.Errorf("%s: no tags", service)
		}
		for _, tag := range doc.Tags {
			if m := grpcWords.FindAllString(tag.Description, -1); len(m) > 0 {
				t.Errorf("%s: tag %s speaks gRPC on the HTTP page: %q", service, tag.Name, m)
			}
			if tag.Name != "TokenService" && !strings.Contains(tag.Description, "400 `ValidationError`") {
				t.Errorf("%s: tag %s does not name the 400 of a bad request: %q", service, tag.Name, tag.Description)
			}
		}
		// Every other text of the page: no gRPC code, no proto field name of a JSON field.
		var all any
		if err := json.Unmarshal(raw, &all); err != nil {
			t.Fatal(err)
		}
		props := map[string]bool{}
		texts := map[string]string{}
		var walk func(v any, at string)
		walk = func(v any, at string) {
			switch v := v.(type) {
			case map[string]any:
				for k, e := range v {
					if s, ok := e.(string); ok && (k == "description" || k == "summary") {
						texts[at+"/"+k] = s
					}
					if k == "properties" {
						for name := range e.(map[string]any) {
							props[name] = true
						}
					}
					walk(e, at+"/"+k)
				}
			case []any:
				for _, e := range v {
					walk(e, at+"[]")
				}
			}
		}
		walk(all, "")
		codes := regexp.MustCompile(`\b(INVALID_ARGUMENT|UNAUTHENTICATED|PERMISSION_DENIED|RESOURCE_EXHAUSTED|UNAVAILABLE|INTERNAL)\b|google\.rpc`)
		snake := regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)
		for at, text := range texts {
			if m := codes.FindAllString(text, -1); len(m) > 0 {
				t.Errorf("%s: %s speaks gRPC: %q", service, at, m)
			}
			for _, w := range snake.FindAllString(text, -1) {
				parts := strings.Split(w, "_")
				for i := 1; i < len(parts); i++ {
					parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
				}
				if camel := strings.Join(parts, ""); !props[w] && props[camel] {
					t.Errorf("%s: %s names the proto field %s; the JSON name is %s", service, at, w, camel)
				}
			}
		}
	}
}
