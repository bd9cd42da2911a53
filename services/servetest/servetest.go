// Package servetest runs a service in the serving frame for tests: real loopback listeners on
// port 0, dev-mode credentials, helpers to call the JSON front and a gRPC connection.
package servetest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/internal/calltest"
	"github.com/yardstick-dev/yardstick/pkg/serve"
)

// Server is a running service.
type Server struct {
	t      testing.TB
	Base   string           // http://127.0.0.1:port
	Conn   *grpc.ClientConn // to the gRPC port
	Config serve.Config
	// Handler is the HTTP front itself, for in-process benchmarks and fuzzing.
	Handler http.Handler
	// Frame is the serving frame the service runs in.
	Frame *serve.Server
	mu    sync.Mutex
	token string
}

// Start runs svc as the service id names, with its settings, in dev mode on loopback until the
// test ends. edit, if not nil, adjusts the configuration first.
func Start(t testing.TB, id serve.Identity, svc func(cfg serve.Config) serve.Service, edit func(*serve.Config)) *Server {
	t.Helper()
	id.HTTPAddr, id.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg, err := serve.LoadConfig(id, nil, []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=127.0.0.1:0", "YARDSTICK_GRPC_ADDR=127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReloadInterval = 0
	if edit != nil {
		edit(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := serve.New(ctx, cfg, log, svc(cfg))
	if err != nil {
		cancel()
		t.Fatalf("serve.New: %v", err)
	}
	httpLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	grpcLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Serve(ctx, httpLis, grpcLis) }()
	conn, err := grpc.NewClient(grpcLis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, Base: "http://" + httpLis.Addr().String(), Conn: conn, Config: cfg, Handler: srv.Handler(), Frame: srv}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		select {
		case err := <-stopped:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("server did not stop within 15s")
		}
	})
	return s
}

// Response is an HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value for structural comparison.
func (r Response) JSON(t testing.TB) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.Body)
	}
	return v
}

// Do sends a request with the given headers (name, value pairs).
func (s *Server) Do(method, path, contentType, body string, header ...string) Response {
	s.t.Helper()
	return Response(calltest.Do(s.t, method, s.Base+path, contentType, body, header...))
}

// Post sends a JSON body with the demo client's token.
func (s *Server) Post(path, body string) Response {
	s.t.Helper()
	return s.Do(http.MethodPost, path, "application/json", body, "Authorization", "Bearer "+s.Token())
}

// Token is a token of the demo client for this service.
func (s *Server) Token() string {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" {
		return s.token
	}
	r := s.Do(http.MethodPost, "/authToken", "application/json", `{"clientId":"demo","clientSecret":"demo-secret"}`)
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &tok) != nil {
		s.t.Fatalf("authToken: got %d %s", r.Status, r.Body)
	}
	s.token = tok.AccessToken
	return s.token
}

// Authed is a context carrying the demo client's token for gRPC calls.
func (s *Server) Authed(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.Token())
}

// HasProblem reports whether a 400 body's validationErrors name the field at path, keyed as the
// JSON front keys them: under the top-level field, the message starting with the element path
// (`items[1].id: ...` under `items`); a top-level path or nonFieldErrors needs only an entry.
func HasProblem(validationErrors map[string][]string, path string) bool {
	key := path
	if i := strings.IndexAny(path, ".["); i > 0 {
		key = path[:i]
	}
	for _, msg := range validationErrors[key] {
		if key == path || strings.HasPrefix(msg, path+": ") {
			return true
		}
	}
	return false
}
