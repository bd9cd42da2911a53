package token

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisCallBoundedByItsContext: a call to a Redis that stops answering ends with its
// context (two timeouts), not with the URL's read timeout: go-redis ignores a context's deadline
// unless told otherwise, and a URL's long read_timeout would then hold every rated call.
func TestRedisCallBoundedByItsContext(t *testing.T) {
	t.Parallel()
	srv := startRedis(t)
	s, err := DialRedis(srv.url()+"?read_timeout=10s", nil, "down", "up")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ping := func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() }
	if err := s.Call(ping); err != nil {
		t.Fatalf("got %v before the pause; want Redis answering", err)
	}
	admin := srv.client()
	defer admin.Close()
	// Paused for less than the URL's read timeout: a call bounded only by that timeout would
	// wait the pause out and succeed.
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "6000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.Do(context.Background(), "CLIENT", "UNPAUSE")
	start := time.Now()
	err = s.Call(ping)
	if err == nil {
		t.Fatalf("got an answer after %v from a Redis paused for 6 s; want the call ended by its 500 ms context", time.Since(start))
	}
	if s.Fallbacks() != 1 {
		t.Errorf("got %d fallbacks; want 1 (the call that timed out)", s.Fallbacks())
	}
}
