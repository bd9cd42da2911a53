// Package serve is the serving frame both Yardstick services run in, and its public surface:
// Main (configuration, logger, the service's build, then serving until the context ends),
// Identity (a service's name and default addresses: the frame names no service), Config and
// LoadConfig (YARDSTICK_* settings and flags), Service (what a service brings: its gRPC
// registration, its gateway routes on the in-process channel, its wire rules, WireRules, and
// its reload), New and Server (the gRPC server, the JSON front, health, metrics, documents,
// periodic reload and the drain on SIGTERM), and ClaimsFrom for handlers. Handlers answer errors
// with serve/rpcerr; clients read NDJSON batch lines by the engine's rules with serve/ndjson.
//
// The frame wires packages of one concern each, under internal/: docs/architecture.md lists
// them, draws their import graph (TestImportGraph holds it to the code) and follows a JSON, a gRPC
// and a batch call through their files.
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
