package token

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/yardstick-dev/yardstick/internal/proc"
	"github.com/yardstick-dev/yardstick/internal/redistest"
)

// redisServer is a real redis-server on a loopback port (internal/redistest, the harness the
// quota tests share), with a client of this module's Redis library.
type redisServer struct{ *redistest.Server }

// startRedis starts redis-server for the test (skipped without it, failed under CI=true).
func startRedis(t *testing.T) *redisServer { return &redisServer{redistest.Start(t)} }

func (s *redisServer) stop()        { s.Stop() }
func (s *redisServer) restart()     { s.Restart() }
func (s *redisServer) addr() string { return s.Addr() }
func (s *redisServer) url() string  { return s.URL() }

func (s *redisServer) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
}

// flush empties the server between parts of a test.
func (s *redisServer) flush(t *testing.T) {
	t.Helper()
	c := s.client()
	defer c.Close()
	if err := c.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects log lines written from several goroutines (the tests' slog handlers).
type logBuffer = proc.LogBuffer
