package prototest

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
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

// TestOfSizeFails: a size the message cannot take fails the test rather than returning another.
func TestOfSizeFails(t *testing.T) {
	t.Parallel()
	ft := &fakeT{TB: t}
	func() {
		defer func() { recover() }() // fakeT.Fatalf stops the builder as t.Fatalf would
		Score(ft, 1)                 // an item alone is more than a byte
	}()
	if !ft.failed {
		t.Error("Score(1): got a message; want the test failed (no ScoreItemResults request is 1 byte)")
	}
}

// fakeT records a Fatalf and stops the caller by panicking, as testing.T stops it by
// runtime.Goexit.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
