// Package serve is the serving frame both Yardstick services run in: typed configuration, the gRPC
// server with its interceptors (request ids, logs, metrics, panic recovery, authentication), the
// grpc-gateway JSON front with the one error handler that writes DESIGN.md §2's error body, the
// token endpoint, health, metrics, periodic reload of files and graceful shutdown. The gRPC door
// checks tokens on a call's headers, before its message is read, and bounds what calls without
// a token may make it read (grpcguard.go).
//
// The JSON front does not call the service implementations directly: it is a gRPC client of the
// same server over an in-memory connection, so every JSON request passes through exactly the
// interceptors a gRPC caller meets (a gateway registered in-process would skip them).
//
// Libraries: grpc-gateway for the JSON front (it maps SPEC.md's routes onto the rpcs from the
// contract's routes file), prometheus/client_golang for metrics (the de-facto exposition format
// scrapers expect), google.golang.org/genproto errdetails for status details that gRPC clients
// already know how to read, KimMachineGun/automemlimit to set GOMEMLIMIT from the container's
// cgroup memory limit (cgroup v1 and v2, nested hierarchies: more than a few lines to get right).
//
// Under heavy or hostile traffic: large requests are admitted against a memory budget
// (budget.go), request bodies are paced by a minimum rate (bodyrate.go) and SIGTERM drains
// without losing accepted requests (drain.go).
package serve

// Version is the build's version, set at link time with
// -ldflags "-X github.com/yardstick-dev/yardstick/pkg/serve.Version=...". Responses carry it as
// apiVersion.
var Version = "dev"
