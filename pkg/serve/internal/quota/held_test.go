package quota

import (
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// TestHeld: an outcome holds a place of its client's concurrency from Admit to Done, and none
// when the client has no concurrency limit or was refused.
func TestHeld(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
		want bool
	}{
		{"a concurrency of 1", Config{Concurrency: 1}, true},
		{"no concurrency limit", Config{Rate: 10}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, _ := newLocalLimiter(t, tc.cfg, map[string]token.Limits{"acme": {}})
			out := l.Admit("acme")
			if out.Err != nil {
				t.Fatalf("admit: got %v; want admitted", out.Err)
			}
			if got := out.Held(); got != tc.want {
				t.Errorf("held after Admit: got %v; want %v", got, tc.want)
			}
			if tc.want {
				if again := l.Admit("acme"); again.Err == nil || again.Held() {
					t.Errorf("a second call while the first holds the place: got %v held %v; want refused, holding nothing", again.Err, again.Held())
				}
			}
			out.Done()
			if out.Held() {
				t.Errorf("held after Done: got true; want false")
			}
		})
	}
}
