package batch

import (
	"context"
	"testing"
)

// TestTrusted: a trusted dispatcher's answers are written as they are, a trailing newline
// dropped; an untrusted one's are checked (a body that is not JSON is a 500).
func TestTrusted(t *testing.T) {
	t.Parallel()
	d := DispatcherFunc(func(_ context.Context, path string, _ []byte) (int, []byte) {
		if path == "/broken" {
			return 200, []byte(`{"a":`)
		}
		return 200, []byte(`{"a":1}` + "\n")
	})
	for _, tc := range []struct {
		trusted bool
		want    string
	}{
		{true, `{"id":"b","status":200,"body":{"a":`},
		{false, `{"id":"b","status":500,`},
	} {
		srv, _ := server(t, d, Options{Trusted: tc.trusted})
		got := post(t, srv.URL, rec(`"a"`, "/ok", `{}`)+rec(`"b"`, "/broken", `{}`))
		if len(got) != 3 || got[0] != `{"id":"a","status":200,"body":{"a":1}}` || got[1][:len(tc.want)] != tc.want {
			t.Errorf("trusted %v: %q", tc.trusted, got)
		}
	}
}
