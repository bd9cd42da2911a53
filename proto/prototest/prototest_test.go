package prototest

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestExactSize: every builder makes a message of exactly the size asked, on both sides of the
// limits the frame's tests hold (64 KiB for a login, 1 MiB, and a group's 16 MiB).
func TestExactSize(t *testing.T) {
	t.Parallel()
	builders := map[string]func(testing.TB, int) proto.Message{
		"Score": func(t testing.TB, n int) proto.Message { return Score(t, n) },
		"Issue": func(t testing.TB, n int) proto.Message { return Issue(t, n) },
		"Group": func(t testing.TB, n int) proto.Message { return Group(t, n) },
	}
	for name, build := range builders {
		for _, n := range []int{100, 101, 127, 128, 64 << 10, 64<<10 + 1, 1 << 20, 1<<20 + 1, 16 << 20, 16<<20 + 1} {
			if name != "Group" && n > 1<<20+1 {
				continue
			}
			t.Run(fmt.Sprintf("%s(%d)", name, n), func(t *testing.T) {
				t.Parallel()
				if got := proto.Size(build(t, n)); got != n {
					t.Errorf("%s(%d): got %d bytes; want %d", name, n, got, n)
				}
			})
		}
	}
}

// TestOfSizeFails: a size the message cannot take is no message, rather than one of another size.
func TestOfSizeFails(t *testing.T) {
	t.Parallel()
	build := func(pad string) *scoringv1.ScoreItemResultsRequest {
		return &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: &pad}}}
	}
	if m, ok := ofSize(1, build); ok {
		t.Errorf("ofSize(1): got %v; want none (an item alone is more than a byte)", m)
	}
	if m, ok := ofSize(50, build); !ok || proto.Size(m) != 50 {
		t.Errorf("ofSize(50): got %v, %v; want a message of 50 bytes", m, ok)
	}
}
