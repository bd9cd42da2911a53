package admission

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// queued starts a call of client that waits for cost, and returns once it is in its queue; the
// call's grant is sent on admitted (in the order of admission), nil when refused.
func queued(t *testing.T, b *Budget, client string, cost int64, admitted chan<- string, wg *sync.WaitGroup) {
	t.Helper()
	before := b.Waiting()
	wg.Go(func() {
		g, ok := b.admit(context.Background(), client, cost, b.wait)
		if !ok {
			admitted <- "refused:" + client
			return
		}
		admitted <- client
		g.Release()
	})
	for deadline := time.Now().Add(5 * time.Second); b.Waiting() == before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the call of %s never queued", client)
		}
	}
}

// TestFairRoundRobin: a client with many queued calls cannot hold another client's single one
// behind all of them: the queues are served one call per client in turn.
func TestFairRoundRobin(t *testing.T) {
	t.Parallel()
	b := New(100, prometheus.NewRegistry(), "forecast")
	b.SetWait(time.Minute)
	hold, ok := b.Admit(100)
	if !ok {
		t.Fatal("the first call: refused; want admitted")
	}
	admitted := make(chan string, 16)
	var wg sync.WaitGroup
	// Each call takes the whole budget, so they run one at a time, released as soon as admitted.
	for range 5 {
		queued(t, b, "flood", 100, admitted, &wg)
	}
	queued(t, b, "single", 100, admitted, &wg)
	queued(t, b, "third", 100, admitted, &wg)
	hold.Release()
	wg.Wait()
	close(admitted)
	var order []string
	for c := range admitted {
		order = append(order, c)
	}
	want := []string{"flood", "single", "third", "flood", "flood", "flood", "flood"}
	if !slices.Equal(order, want) {
		t.Errorf("admitted in order %v; want %v", order, want)
	}
	if b.Admitted() != 0 || b.Waiting() != 0 {
		t.Errorf("after all: got %d in use, %d waiting; want 0 and 0", b.Admitted(), b.Waiting())
	}
}

// TestFairWait: both sides of the wait: a call refused once its wait is over (nothing freed),
// one admitted when budget frees within it; 0 refuses at once; the call's end refuses it; no
// call arriving while others wait jumps them.
func TestFairWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		wait    time.Duration
		freeAt  time.Duration // when the holder releases; 0: never
		cancel  bool
		want    bool
		atLeast time.Duration
	}{
		{"refused at once with no wait", 0, 0, false, false, 0},
		{"refused after its wait", 100 * time.Millisecond, 0, false, false, 100 * time.Millisecond},
		{"admitted when budget frees within the wait", 5 * time.Second, 50 * time.Millisecond, false, true, 50 * time.Millisecond},
		{"refused when the call ends", 5 * time.Second, 0, true, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewRegistry()
			b := New(100, reg, "forecast")
			b.SetWait(tc.wait)
			hold, _ := b.Admit(60)
			start := time.Now() // before the release is scheduled: it comes at freeAt at the earliest
			if tc.freeAt > 0 {
				time.AfterFunc(tc.freeAt, hold.Release)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			g, ok := b.admit(ctx, "c", 50, b.wait)
			took := time.Since(start)
			if ok != tc.want || took < tc.atLeast || took > tc.atLeast+2*time.Second {
				t.Fatalf("got ok=%v after %s; want %v after %s", ok, took, tc.want, tc.atLeast)
			}
			g.Release()
			if b.Waiting() != 0 {
				t.Errorf("after: %d waiting; want 0", b.Waiting())
			}
			if got := testutil.ToFloat64(b.refused); (got == 1) == ok {
				t.Errorf("refusals counted: %v; want %v", got, map[bool]int{true: 0, false: 1}[ok])
			}
		})
	}
	b := New(100, prometheus.NewRegistry(), "forecast")
	b.SetWait(time.Minute)
	hold, _ := b.Admit(60)
	admitted := make(chan string, 1)
	var wg sync.WaitGroup
	queued(t, b, "big", 50, admitted, &wg)
	if _, ok := b.Admit(10); ok {
		t.Errorf("a call of 10 with 40 free while a call of 50 waits: admitted; want refused (it would jump the queue)")
	}
	hold.Release()
	wg.Wait()
	if got := <-admitted; got != "big" {
		t.Errorf("the waiting call: got %s; want big admitted", got)
	}
}

// TestFairStrictTurn: when the call whose turn it is does not fit, later ones wait, however
// small (a large call is never starved by small ones).
func TestFairStrictTurn(t *testing.T) {
	t.Parallel()
	b := New(100, prometheus.NewRegistry(), "forecast")
	b.SetWait(time.Minute)
	a, _ := b.Admit(50)
	c, _ := b.Admit(50)
	admitted := make(chan string, 4)
	var wg sync.WaitGroup
	queued(t, b, "large", 100, admitted, &wg)
	queued(t, b, "small", 10, admitted, &wg)
	a.Release() // 50 free: the large call's turn, and it does not fit: the small one waits too
	time.Sleep(50 * time.Millisecond)
	if b.Waiting() != 2 {
		t.Fatalf("with 50 free: %d waiting; want both", b.Waiting())
	}
	c.Release()
	wg.Wait()
	close(admitted)
	var order []string
	for x := range admitted {
		order = append(order, x)
	}
	if !slices.Equal(order, []string{"large", "small"}) {
		t.Errorf("order: got %v; want [large small]", order)
	}
}

// TestFairRace: calls of many clients waiting, timing out and admitted at once leave the
// budget whole: nothing leaked, nothing given twice (run with -race).
func TestFairRace(t *testing.T) {
	t.Parallel()
	b := New(1000, prometheus.NewRegistry(), "forecast")
	b.SetWait(5 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%7)*time.Millisecond)
			defer cancel()
			if g, ok := b.admit(ctx, fmt.Sprint("c", i%5), int64(100+i%300), b.wait); ok {
				time.Sleep(time.Duration(i%3) * time.Millisecond)
				g.Release()
			}
		})
	}
	wg.Wait()
	if b.Admitted() != 0 || b.Waiting() != 0 {
		t.Errorf("after: %d in use, %d waiting; want 0 and 0", b.Admitted(), b.Waiting())
	}
}

// TestFairTurnKept: a client whose call first in line gives up keeps its turn, its next call
// first; one admitted passes the turn on.
func TestFairTurnKept(t *testing.T) {
	t.Parallel()
	b := New(100, prometheus.NewRegistry(), "forecast")
	b.SetWait(time.Minute)
	hold, _ := b.Admit(100)
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan bool, 1)
	go func() { _, ok := b.admit(ctx, "a", 100, b.wait); gaveUp <- !ok }()
	for deadline := time.Now().Add(5 * time.Second); b.Waiting() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first call of a never queued")
		}
	}
	admitted := make(chan string, 2)
	var wg sync.WaitGroup
	queued(t, b, "b", 100, admitted, &wg)
	queued(t, b, "a", 100, admitted, &wg)
	cancel()
	if !<-gaveUp {
		t.Fatal("the cancelled call: admitted; want refused")
	}
	hold.Release()
	wg.Wait()
	close(admitted)
	var order []string
	for c := range admitted {
		order = append(order, c)
	}
	if !slices.Equal(order, []string{"a", "b"}) {
		t.Errorf("order: got %v; want [a b]", order)
	}
}
