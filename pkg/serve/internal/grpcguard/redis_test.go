package grpcguard

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/yardstick-dev/yardstick/internal/redistest"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/token"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestSlowRedisHoldsNoOtherStream: with the clients' rates shared through a Redis that has stopped
// answering (CLIENT PAUSE), a gRPC call's rate decision waits in the call's own goroutine, up to
// its 500 ms bound, not in the connection's reader (the tap handle): a health check sent on
// the same connection while the first call waits is answered before that decision ends, and the
// first call is then decided by the replica's own share (one fallback counted) and answered.
func TestSlowRedisHoldsNoOtherStream(t *testing.T) {
	t.Parallel()
	r := redistest.Start(t)
	// A read timeout of 1 s (the URL's; 250 ms by default): the call's 500 ms context ends the
	// decision first.
	limits, err := quota.New(quota.Config{Service: token.ServiceForecast, Rate: 1000, Burst: 1000, RedisURL: r.URL() + "?read_timeout=1s"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { limits.Close() })
	h := startGuard(t, func(g *Guard) { g.Gate.Limits = limits })
	score := scoringv1.NewScoringServiceClient(h.conn)
	authed := bearer("Bearer " + h.token)
	if _, err := score.ScoreItemResults(authed, scoreOfSize(t, 100)); err != nil || limits.Fallbacks() != 0 {
		t.Fatalf("a call with Redis answering: got %v, %d fallbacks; want OK, decided in Redis", err, limits.Fallbacks())
	}
	rc := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer rc.Close()
	if err := rc.Do(context.Background(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	first := make(chan error, 1)
	go func() {
		_, err := score.ScoreItemResults(authed, scoreOfSize(t, 100))
		first <- err
	}()
	time.Sleep(50 * time.Millisecond) // the first call is in its decision, which lasts 500 ms
	if _, err := healthpb.NewHealthClient(h.conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("a health check on the same connection: got %v; want SERVING", err)
	}
	answered, pending := time.Since(start), limits.Fallbacks() == 0
	if !pending {
		t.Errorf("the health check was answered %s after the first call was sent, after its Redis decision ended; want before: held behind it", answered)
	}
	if err := <-first; err != nil {
		t.Fatalf("the call whose decision Redis did not answer: got %v; want OK by the replica's own share", err)
	}
	if took, n := time.Since(start), limits.Fallbacks(); took < 450*time.Millisecond || n != 1 {
		t.Errorf("the call Redis did not answer: took %s with %d fallbacks; want at least the decision's 500 ms, 1 fallback", took, n)
	}
	t.Logf("health check answered %s after the rated call was sent", answered)
}
