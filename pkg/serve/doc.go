// Package serve is the serving frame both Yardstick services run in, and its public surface:
// Main (configuration, logger, the service's build, then serving until the context ends),
// Identity (a service's name and default addresses: the frame names no service), Config and
// LoadConfig (YARDSTICK_* settings and flags), Service (what a service brings: its gRPC
// registration, its gateway routes on the in-process channel, its wire rules, WireRules, and
// its reload), New and Server (the
// gRPC server, the JSON front, health, metrics, documents, periodic reload and the drain on
// SIGTERM), and RequestID and ClaimsFrom for handlers. Handlers answer errors with serve/rpcerr;
// clients read NDJSON batch lines by the engine's rules with serve/ndjson.
//
// The frame wires packages of one concern each, under internal/:
//
//   - routes: the route table (path, rpc, access rule, body and message limits) and a gRPC
//     batch rpc's record and answer, read once from the contract;
//   - gate: the one admission of every call (token, rule, the client's limits, the budget, in
//     that order), which returns the ticket the call runs the chain with and releases;
//   - authz: token checks (one Authorize, which the gate calls), logins, the caller's address;
//   - httpfront: the JSON front before grpc-gateway, its marshaler and error handlers;
//   - inproc: the in-process door, a grpc.ClientConnInterface that runs the chain with a call's
//     ticket;
//   - grpcguard: the gRPC side's limits, slots, codec, connection watch and log lines;
//   - admission: the memory budget, its cost model, its fair queues by client and the gRPC read
//     pool;
//   - quota: each client's limits: its rate (GCRA, one budget through Redis), its calls in
//     progress, and the pacing of a stream's records and students;
//   - telemetry: metrics, the logger, request ids and the one writer of request lines;
//   - tracing: OpenTelemetry from the OTEL_* variables, off without an endpoint;
//   - batch: the NDJSON batch and group stream engines, and Ordered for gRPC batches;
//   - jsonwire: JSON decoding and encoding of the contract's messages, through the codecs
//     generated from the contract (proto/jsoncodec);
//   - reqinfo: a request's facts in its context; apidocs: Swagger UI.
//
// CORS for pages on other origins, off unless YARDSTICK_CORS_ORIGINS names them, is cors.go.
// The chain every call runs once admitted and decoded, and the gRPC door's steps before it, is
// chain.go; the gRPC stream interceptors are the guard's first, then quota's (the pacing of a
// stream's messages). The drain after
// SIGTERM is drain.go. docs/architecture.md traces a JSON and a gRPC request through these files;
// TestImportGraph holds its import graph, and this list, to the code.
//
// Libraries: grpc-gateway for the JSON front (it maps the original API's routes onto the rpcs from
// the contract's routes file), prometheus/client_golang for metrics, google.golang.org/genproto
// errdetails for status details that gRPC clients already know how to read,
// KimMachineGun/automemlimit to set GOMEMLIMIT from the container's cgroup memory limit,
// golang.org/x/sync's weighted semaphores for the memory budget, the streams' share of it and the
// gRPC read pool (internal/admission), golang.org/x/time/rate's token bucket for the log lines of
// refusals (internal/telemetry), OpenTelemetry's otelgrpc and otelhttp for the server spans
// (internal/tracing), and redis/go-redis for the clients' rates shared among replicas
// (internal/quota).
package serve

// Version is the build's version, set at link time with
// -ldflags "-X github.com/yardstick-dev/yardstick/pkg/serve.Version=...". Responses carry it as
// apiVersion.
var Version = "dev"
