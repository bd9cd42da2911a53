package quota

import (
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// BenchmarkAdmit is one unary call's check, a rate far above the load: in memory, and shared
// through a real redis-server on loopback (one EVALSHA round trip).
func BenchmarkAdmit(b *testing.B) {
	own := func(string) (token.Limits, bool) { return token.Limits{Rate: 1e9, Concurrency: 1 << 20}, true }
	b.Run("memory", func(b *testing.B) {
		l, err := New(Config{Service: "scoring", Limits: own})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			out := l.Admit("acme")
			if out.Err != nil {
				b.Fatal(out.Err)
			}
			out.Done()
		}
	})
	b.Run("redis", func(b *testing.B) {
		r := startRedis(b)
		l, err := New(Config{Service: "scoring", Limits: own, RedisURL: r.url()})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		b.ReportAllocs()
		for b.Loop() {
			out := l.Admit("acme")
			if out.Err != nil {
				b.Fatal(out.Err)
			}
			out.Done()
		}
		if l.Fallbacks() != 0 {
			b.Fatalf("%d decisions without Redis", l.Fallbacks())
		}
	})
}
