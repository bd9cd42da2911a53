package servetest

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/proto/openapi"
)

// DocumentedSizes holds the list sizes the service's OpenAPI document states (maxItems, written in
// overlay.yaml) to sizes, the limits the service enforces by default, by property name, and
// returns how many lists it checked: the documents cannot drift from what the service checks.
// A count that shares a list's name (FrameworkOffer.items) is not a list and has none.
func DocumentedSizes(t testing.TB, service string, sizes map[string]int) int {
	t.Helper()
	raw, err := openapi.Document(service, "dev")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Type     string `json:"type"`
					MaxItems *int   `json:"maxItems"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for name, s := range doc.Components.Schemas {
		for prop, p := range s.Properties {
			if want, ok := sizes[prop]; ok && p.Type == "array" {
				checked++
				if p.MaxItems == nil || *p.MaxItems != want {
					t.Errorf("%s.%s: got maxItems %v; want %d", name, prop, p.MaxItems, want)
				}
			}
		}
	}
	return checked
}

// RequestLists are the list fields of the given JSON names in every message the rpcs of services
// take (their requests and what the requests hold), by message: the lists a service's
// WireRules.ListLimits must name, so that a new request's list cannot go without its limit.
func RequestLists(names []string, services ...protoreflect.ServiceDescriptor) map[protoreflect.FullName][]string {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[protoreflect.FullName][]string{}
	seen := map[protoreflect.FullName]bool{}
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		for i := range md.Fields().Len() {
			fd := md.Fields().Get(i)
			if fd.IsList() && want[fd.JSONName()] {
				out[md.FullName()] = append(out[md.FullName()], fd.JSONName())
			}
			if fd.Message() != nil {
				walk(fd.Message())
			}
		}
	}
	for _, sd := range services {
		for i := range sd.Methods().Len() {
			walk(sd.Methods().Get(i).Input())
		}
	}
	return out
}
