package batch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestOrderedKeepsOrder: answers leave in input order whatever order they finish in, every
// record answered once, nil after the last.
func TestOrderedKeepsOrder(t *testing.T) {
	t.Parallel()
	const n = 2000
	next := 0
	recv := func() (int, error) {
		if next == n {
			return 0, io.EOF
		}
		next++
		return next - 1, nil
	}
	answer := func(_ context.Context, i int) int {
		time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
		return i * 2
	}
	var got []int
	send := func(a int) error { got = append(got, a); return nil }
	sent, err := Ordered(context.Background(), recv, nil, answer, send, Options{Workers: 8})
	if err != nil || sent != n || len(got) != n {
		t.Fatalf("sent %d (%d), %v; want %d, nil", sent, len(got), err, n)
	}
	for i, a := range got {
		if a != 2*i {
			t.Fatalf("answer %d is %d; want %d", i, a, 2*i)
		}
	}
}

// TestOrderedBoundsWhatItHolds: with the answers not taken, Ordered reads at most InFlight
// records, and, when they weigh, no record while those held weigh MaxHeld or more (the oldest
// aside); both sides of each bound.
func TestOrderedBoundsWhatItHolds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		inFlight, held int
		weight         int
		want           int64
	}{
		{"in flight", 4, 1 << 20, 1, 4},
		{"held: the third reaches the bound", 16, 25, 10, 3},
		{"held: the bound not reached", 16, 31, 10, 4},
		{"held: the oldest goes whatever it weighs", 16, 5, 10, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var read atomic.Int64
			recv := func() (int, error) { read.Add(1); return 0, nil }
			taken := make(chan struct{}) // never: the caller takes no answer
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := Ordered(ctx, recv, func(int) int { return tc.weight }, func(_ context.Context, i int) int { return i },
					func(int) error { <-taken; return nil }, Options{InFlight: tc.inFlight, MaxHeld: tc.held})
				done <- err
			}()
			time.Sleep(200 * time.Millisecond)
			if got := read.Load(); got != tc.want {
				t.Errorf("read %d records; want %d", got, tc.want)
			}
			cancel()
			close(taken)
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("got %v; want the context's cancellation", err)
				}
			case <-time.After(time.Second):
				t.Fatal("Ordered did not return within a second of its context's end")
			}
		})
	}
}

// TestOrderedStopsOnReadError: a read that fails ends the stream with its error, every record
// read before it answered and sent first, in order.
func TestOrderedStopsOnReadError(t *testing.T) {
	t.Parallel()
	broken := errors.New("connection reset")
	n := 0
	recv := func() (int, error) {
		if n == 10 {
			return 0, broken
		}
		n++
		return n, nil
	}
	var got []int
	sent, err := Ordered(context.Background(), recv, nil, func(_ context.Context, i int) int { return i },
		func(a int) error { got = append(got, a); return nil }, Options{})
	if !errors.Is(err, broken) {
		t.Errorf("got %v; want the read's error", err)
	}
	if sent != 10 || len(got) != 10 || got[0] != 1 || got[9] != 10 {
		t.Errorf("sent %d: %v; want the 10 records read, in order", sent, got)
	}
}

// TestOrderedReadPanicEndsTheStream: a panic while a record is read (the frame's decoding) ends
// that stream with Internal, every record read before it answered first, logged once with its
// stack; the process goes on.
func TestOrderedReadPanicEndsTheStream(t *testing.T) {
	t.Parallel()
	n := 0
	recv := func() (int, error) {
		if n == 3 {
			panic("decoder bug")
		}
		n++
		return n, nil
	}
	var logs bytes.Buffer
	var got []int
	sent, err := Ordered(context.Background(), recv, nil, func(_ context.Context, i int) int { return i },
		func(a int) error { got = append(got, a); return nil }, Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if status.Code(err) != codes.Internal {
		t.Errorf("got %v; want Internal", err)
	}
	if sent != 3 || len(got) != 3 {
		t.Errorf("sent %d: %v; want the 3 records read before the panic", sent, got)
	}
	if lines := strings.Count(logs.String(), "reading a record panicked"); lines != 1 || !strings.Contains(logs.String(), "decoder bug") || !strings.Contains(logs.String(), "stack=") {
		t.Errorf("log: %d lines, %q; want one with the panic and its stack", lines, logs.String())
	}
}
