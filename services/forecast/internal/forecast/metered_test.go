package forecast

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// startMetered is start, with this service's own handler of the rpc method reading, when the test
// asks, what the frame's budget holds while the handler runs: admitted(t, do) runs do, which must
// call method once, and returns yardstick_memory_budget_in_use_bytes as /metrics served it then
// (the cost the frame admitted the call at). The handler reads nothing when not asked, so that a
// call's heap is the handler's alone.
func startMetered(t *testing.T, method string) (s *servetest.Server, admitted func(t *testing.T, do func()) int64) {
	t.Helper()
	var (
		mu    sync.Mutex
		asked bool
		seen  []int64
	)
	during := func() {
		mu.Lock()
		defer mu.Unlock()
		if asked {
			seen = append(seen, inUse(t, s.Handler))
		}
	}
	s = servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive("")
		if err != nil {
			t.Fatal(err)
		}
		svc := New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
		register := svc.Register
		svc.Register = func(g grpc.ServiceRegistrar) { register(meteredRegistrar{g, method, during}) }
		return svc
	}, nil)
	admitted = func(t *testing.T, do func()) int64 {
		t.Helper()
		mu.Lock()
		asked, seen = true, nil
		mu.Unlock()
		do()
		mu.Lock()
		defer mu.Unlock()
		asked = false
		if len(seen) != 1 {
			t.Fatalf("the handler of %s read the budget %d times; want once (did the call reach it?)", method, len(seen))
		}
		return seen[0]
	}
	return s, admitted
}

// meteredRegistrar registers services as they are, but for the handler of method, which calls
// during once the frame has decoded and admitted its request, before it runs.
type meteredRegistrar struct {
	grpc.ServiceRegistrar
	method string
	during func()
}

func (r meteredRegistrar) RegisterService(desc *grpc.ServiceDesc, impl any) {
	d := *desc
	d.Methods = slices.Clone(desc.Methods)
	for i, m := range d.Methods {
		if "/"+d.ServiceName+"/"+m.MethodName != r.method {
			continue
		}
		// The frame's doors call what the generated handler hands its interceptor (the gRPC
		// server each call, the in-process channel the one it kept): that is what is wrapped.
		d.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			return m.Handler(srv, ctx, dec, func(ctx context.Context, req any, info *grpc.UnaryServerInfo, u grpc.UnaryHandler) (any, error) {
				metered := func(ctx context.Context, req any) (any, error) {
					r.during()
					return u(ctx, req)
				}
				if ic == nil {
					return metered(ctx, req)
				}
				return ic(ctx, req, info, metered)
			})
		}
	}
	r.ServiceRegistrar.RegisterService(&d, impl)
}

// inUse is yardstick_memory_budget_in_use_bytes as the frame's /metrics serves it now.
func inUse(t *testing.T, frame http.Handler) int64 {
	w := httptest.NewRecorder()
	frame.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	sc := bufio.NewScanner(w.Body)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), " ")
		if name == "yardstick_memory_budget_in_use_bytes" || strings.HasPrefix(name, "yardstick_memory_budget_in_use_bytes{") {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Errorf("%s: %v", sc.Text(), err)
			}
			return int64(v)
		}
	}
	t.Errorf("/metrics (%d) has no yardstick_memory_budget_in_use_bytes", w.Code)
	return -1
}
