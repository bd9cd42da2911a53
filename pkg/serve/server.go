package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	goruntime "runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/apidocs"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/grpcguard"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/httpfront"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/inproc"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/tracing"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	"github.com/yardstick-dev/yardstick/proto/openapi"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// Server is one running service: its gRPC server, its JSON front and their shared state.
type Server struct {
	cfg       Config
	log       *slog.Logger
	svc       Service
	issuer    *token.Issuer
	telemetry *telemetry.Recorder // metrics and request log lines (internal/telemetry)
	routes    *routes.Table       // every rpc served, with its path, rule and limits (internal/routes)
	gate      *gate.Gate          // the one admission of every call (internal/gate): token checks and logins, client limits, memory budget
	unary     inproc.Chain        // the chain of every unary call, once admitted and decoded (chain.go)
	channel   *inproc.Channel     // the in-process door: the JSON front, batch records (internal/inproc)
	guard     *grpcguard.Guard    // the gRPC side's limits, slots and codec (internal/grpcguard)
	openapi   []byte

	grpc     *grpc.Server
	probeLis net.Listener // Serve's probe server's, health alone for the kubelet (grpcguard.NewProbeServer); nil: none
	health   *health.Server
	http     *http.Server
	ready    atomic.Bool

	reloads  *telemetry.Reloads // what each reload took or refused
	tracing  *tracing.Tracing   // OpenTelemetry from the OTEL_* variables; off unless an endpoint is set
	draining atomic.Bool        // after SIGTERM: every HTTP response says Connection: close (drain.go)
}

// New builds a server from its configuration: the token issuer, the gRPC server and the JSON front.
func New(ctx context.Context, cfg Config, log *slog.Logger, svc Service) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	opts := token.Options{ClientsFile: cfg.ClientsFile, KeysDir: cfg.KeysDir, Dev: cfg.Dev, TTL: cfg.TokenTTL,
		RedisURL: cfg.RedisURL, Logger: log, KeyLifetime: cfg.KeyLifetime}
	if c := cfg.tokenClock; c != nil {
		opts.TTL, opts.Leeway = c.ttl, c.leeway
	}
	issuer, err := token.New(opts)
	if err != nil {
		return nil, fmt.Errorf("token issuer: %w", err)
	}
	tr, err := tracing.New(ctx, cfg.Service, Version)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, svc: svc, issuer: issuer, telemetry: telemetry.NewRecorder(log, cfg.Service), tracing: tr}
	s.gate = &gate.Gate{Authz: authz.New(issuer, cfg.Service, log, cfg.TrustedProxies)} // its budget in buildGRPC
	s.registerOperatorSeries()
	if s.gate.Limits, err = quota.New(quota.Config{Service: cfg.Service, Rate: cfg.ClientRate, Burst: cfg.ClientBurst,
		Concurrency: cfg.ClientConcurrency, Replicas: cfg.Replicas, RedisURL: cfg.RedisURL, Limits: issuer.Limits,
		Clients: issuer.ClientIDs, Log: log}); err != nil {
		return nil, err
	}
	if err := s.gate.Limits.Register(s.telemetry.Registry()); err != nil {
		return nil, fmt.Errorf("client limits: %w", err)
	}
	log.Info("token issuer ready", "issuer", issuer.Summary())
	log.Info("tracing", "enabled", tr.Enabled())
	if cfg.Dev {
		log.Warn("DEV MODE: demo client enabled; never use in production", "clientId", "demo", "clientSecret", "demo-secret")
	}

	if s.openapi, err = openapi.Document(cfg.Service, Version); err != nil {
		return nil, err
	}
	if err := s.buildGRPC(svc); err != nil {
		return nil, err
	}
	if err := s.buildHTTP(ctx, svc); err != nil {
		return nil, err
	}
	return s, nil
}

// buildGRPC builds both doors to the handlers (chain.go), the route table between them, and the
// memory budget the guard admits reads and decodings against.
func (s *Server) buildGRPC(svc Service) error {
	cfg := s.cfg
	s.unary = admittedChain(s.unaryChain())
	s.channel = inproc.New(s.unary)
	authv1.RegisterTokenServiceServer(s.channel, s.gate.Authz.TokenService())
	svc.Register(s.channel)
	info := s.channel.ServiceInfo()
	info[healthpb.Health_ServiceDesc.ServiceName] = inproc.Describe(&healthpb.Health_ServiceDesc)
	reflectionOn := cfg.Reflection == "true" || (cfg.Reflection == "auto" && cfg.Dev)
	if reflectionOn {
		for _, d := range reflectionServices {
			info[d.ServiceName] = inproc.Describe(d)
		}
	}
	var err error
	if s.routes, err = routes.Build(info, cfg.MaxBodyBytes, svc.Methods); err != nil {
		return fmt.Errorf("routes: %w", err)
	}
	budgetBytes, source := admission.Size(cfg.MemoryBudget, cfg.MemoryBudgetFraction, memlimit.FromCgroup)
	s.gate.Budget = admission.New(budgetBytes, s.telemetry.Registry(), cfg.Service)
	s.gate.Budget.SetWait(cfg.AdmissionWait) // a call that does not fit waits in its client's queue
	guardOpts := grpcguard.Options{Service: cfg.Service, MaxStreams: cfg.GRPCMaxStreams, ReadTimeout: cfg.GRPCReadTimeout, StreamIdle: cfg.BatchIdle,
		Gate: s.gate, Telemetry: s.telemetry, Log: s.log}
	guard, opts := grpcguard.New(guardOpts, s.routes, budgetBytes) // tap handle, receive limit, codec
	s.guard = guard
	if h := s.tracing.ServerHandler(); h != nil {
		opts = append(opts, grpc.StatsHandler(h)) // only when tracing is on: a stats handler costs every call
	}
	s.grpc = grpc.NewServer(append(opts,
		grpc.UnaryInterceptor(s.grpcUnary()), // composed once (chain.go)
		// The guard: the ticket the tap handle's gate admitted the stream with, its idle limit,
		// each message checked and paced by its client's rate, its log line.
		grpc.StreamInterceptor(s.guard.StreamInterceptor),
		// Stream workers instead of a goroutine per call: a worker's stack grows once, a new
		// goroutine's on every call (≈ 6% of a small call's CPU). Calls beyond the pool get their
		// own, so the pool covers the calls a loaded server has in flight, not only its cores
		// (one per core left 6 of 8 callers' calls growing a stack: docs/performance.md); an idle
		// worker costs its parked stack.
		grpc.NumStreamWorkers(uint32(streamWorkersPerCore*goruntime.GOMAXPROCS(0))),
	)...)
	var records grpc.StreamHandler // the frame's batch rpc, in place of the service's stub
	if svc.BatchRPC != "" {
		shape, err := routes.ReadBatch(svc.BatchRPC)
		if err != nil {
			return err
		}
		records = s.serveRecords(shape)
	}
	for _, rs := range s.channel.Services() {
		d := *rs.Desc
		d.Streams = slices.Clone(d.Streams)
		for i := range d.Streams {
			if records != nil && "/"+d.ServiceName+"/"+d.Streams[i].StreamName == svc.BatchRPC {
				d.Streams[i].Handler = records
			}
		}
		s.guard.Registrar(s.grpc).RegisterService(&d, rs.Impl)
	}
	s.health = health.NewServer()
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(s.guard.Registrar(s.grpc), s.health) // its Check reads its message as the others do
	if reflectionOn {
		reflection.Register(s.grpc)
	}
	s.log.Info("grpc reflection", "enabled", reflectionOn, "setting", cfg.Reflection)
	s.log.Info("memory budget", "bytes", budgetBytes, "source", source, "grpc_read_pool_bytes", s.guard.ReadPool().Size())
	return nil
}

const streamWorkersPerCore = 8

// reflectionServices are the services reflection.Register adds, for the route table, which is
// read before the gRPC server exists (its receive limit comes from the table).
var reflectionServices = []*grpc.ServiceDesc{&reflectionv1.ServerReflection_ServiceDesc, &reflectionv1alpha.ServerReflection_ServiceDesc}

// buildHTTP builds the HTTP side: the JSON front, which calls each route's rpc on the in-process
// channel (the gateway's mux answers only the 404 and 405 of paths with no route), and the
// handlers around it.
func (s *Server) buildHTTP(ctx context.Context, svc Service) error {
	cfg := s.cfg
	gw := httpfront.NewMux()
	front := httpfront.New(httpfront.Options{Routes: s.routes, Gate: s.gate, Channel: s.channel, Gateway: gw,
		Groups: svc.GroupStreams, Stream: batch.Options{Log: s.log, Trusted: true, Idle: cfg.BatchIdle}, Codec: newWireCodec(svc.Wire)})
	gw.Suggest = front.NearestPath
	// The token service has no route on the gateway: the front serves /authToken itself
	// (its own door, httpfront: forms, Basic, OAuth 2.0; then IssueToken through the chain).
	if err := svc.Gateway(ctx, gw.ServeMux, s.channel); err != nil {
		return fmt.Errorf("register the gateway's routes: %w", err)
	}
	for path, rt := range s.routes.ByPath {
		if _, err := s.channel.NewRequest(rt.Method); rt.Stream == routes.Unary && err != nil {
			s.log.Warn("a JSON route's rpc is not on the in-process channel; its calls are answered 500", "rpc", rt.Method, "path", path)
		}
	}
	if err := s.addStreams(svc); err != nil {
		return err
	}
	s.http = &http.Server{
		// The span outermost, so that the request line (ObserveHTTP) has its ids; only when on.
		Handler: s.tracing.HTTPHandler(s.spanRoute,
			httpfront.PaceBodies(cfg.BodyGrace, cfg.MinBodyRate, s.closeWhenDraining(s.telemetry.ObserveHTTP(s.routes.Label, newCORS(cfg).wrap(s.httpRoutes(front)))))),
		ReadHeaderTimeout: 10 * time.Second, // bodies are paced instead (httpfront.PaceBodies)
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	return nil
}

// spanRoute is the route a JSON request's span is named by: the request line's, none for an
// unknown path (routes.Label's "other"), a trailing slash aside as ObserveHTTP sets it aside.
func (s *Server) spanRoute(path string) string {
	if l := s.routes.Label(strings.TrimSuffix(path, "/")); l != "other" {
		return l
	}
	return ""
}

// Handler is the HTTP front as the HTTP listener serves it, for in-process benchmarks and fuzzing.
func (s *Server) Handler() http.Handler { return s.http.Handler }

// Cost is the admission budget's estimate, in bytes of heap, of a request of n body bytes (JSON
// when json, else protobuf) on the rpc fullMethod; a service's tests hold it against its heap.
func (s *Server) Cost(fullMethod string, n int64, json bool) int64 {
	if r := s.routes.ByMethod[fullMethod]; r != nil {
		return s.gate.Budget.Cost(r.Group, n, json)
	}
	return s.gate.Budget.Cost(nil, n, json)
}

// httpRoutes serves the operational endpoints and hands everything else to the API.
func (s *Server) httpRoutes(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var h http.HandlerFunc
		switch r.URL.Path {
		case "/healthz":
			h = func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`)) }
		case "/readyz":
			h = func(w http.ResponseWriter, _ *http.Request) {
				if !s.ready.Load() {
					rpcerr.WriteStatus(w, http.StatusServiceUnavailable)
					return
				}
				writeJSON(w, http.StatusOK, []byte(`{"status":"ready"}`))
			}
		case "/metrics":
			h = promhttp.HandlerFor(s.telemetry.Registry(), promhttp.HandlerOpts{}).ServeHTTP
		case "/openapi.json":
			h = func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.openapi) }
		case "/.well-known/jwks.json":
			h = func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.issuer.JWKS()) }
		default:
			if h = apidocs.Handler(r.URL.Path); h == nil { // GET /docs: Swagger UI
				api.ServeHTTP(w, r)
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			rpcerr.Write(w, rpcerr.HTTP{Status: http.StatusMethodNotAllowed, Body: rpcerr.ErrorBody{
				Message: "Method not allowed.", ExceptionType: rpcerr.ExceptionMethodNotAllowed, AdditionalInfo: "This path takes GET.",
			}})
			return
		}
		h(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
