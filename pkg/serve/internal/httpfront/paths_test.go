package httpfront

import (
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// pathsFront is a front of a service with a unary path a record may name, a group path with its
// group stream, a group path without one, and a batch path.
func pathsFront(batch bool) *Handler {
	table := &routes.Table{ByPath: map[string]*routes.Route{
		"/api/test/echo":                 {Path: "/api/test/echo", Record: true},
		"/api/test/plain":                {Path: "/api/test/plain"},
		"/api/test/reading/group":        {Path: "/api/test/reading/group", Group: &admission.Group{}},
		"/api/test/reading/group/stream": {Path: "/api/test/reading/group/stream", Stream: routes.GroupStream},
		"/api/test/math/group":           {Path: "/api/test/math/group", Group: &admission.Group{}},
	}}
	if batch {
		table.ByPath["/api/test/batch"] = &routes.Route{Path: "/api/test/batch", Stream: routes.Batch}
	}
	return &Handler{Options: Options{Routes: table}}
}

// TestNearestPath: a path one slip away from a documented one (this service's, another's of the
// contract, an operational one) is named; one far from all, or one that exists, is not.
func TestNearestPath(t *testing.T) {
	t.Parallel()
	f := pathsFront(true)
	for _, tc := range []struct{ name, path, want string }{
		{"a letter missing", "/api/test/ech", "/api/test/echo"},
		{"the case wrong", "/API/Test/Echo", "/api/test/echo"},
		{"the batch misspelt", "/api/test/batches", "/api/test/batch"},
		{"an operational path", "/healtz", "/healthz"},
		{"the token path", "/authtoken", "/authToken"},
		{"a path of the other service", "/api/forecast/readng", "/api/forecast/reading"},
		{"far from every path", "/completely/elsewhere/entirely", ""},
		{"a path that exists", "/healthz", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := f.NearestPath(tc.path); got != tc.want {
				t.Errorf("NearestPath(%q): got %q; want %q", tc.path, got, tc.want)
			}
		})
	}
}

// TestTooLarge: a 413 states the limit, and names the stream that takes any number of what the
// body held: the group stream of a group path that has one, the batch path for a path a record
// may name; nothing more otherwise.
func TestTooLarge(t *testing.T) {
	t.Parallel()
	const stated = "The request body exceeds the size limit of 2048 bytes (2 KiB)."
	for _, tc := range []struct {
		name, path string
		batch      bool
		want       string
	}{
		{"a record's path", "/api/test/echo", true, stated + " Send many requests as records of POST /api/test/batch (NDJSON, one a line), which has no size limit."},
		{"a record's path, no batch path", "/api/test/echo", false, stated},
		{"a path no record may name", "/api/test/plain", true, stated},
		{"a group with its stream", "/api/test/reading/group", true, stated + " Send a group of any size one student a line (NDJSON) to POST /api/test/reading/group/stream."},
		{"a group without one", "/api/test/math/group", true, stated},
		{"no route", "", true, stated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := pathsFront(tc.batch)
			e := f.tooLarge(f.Routes.ByPath[tc.path], 2048)
			if e.Status != 413 || e.Body.AdditionalInfo != tc.want {
				t.Errorf("got %d %q; want 413 %q", e.Status, e.Body.AdditionalInfo, tc.want)
			}
		})
	}
}
