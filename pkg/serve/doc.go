// Package serve is the serving frame both Yardstick services run in: typed configuration, the gRPC
// server with its interceptors (request ids, logs, metrics, panic recovery, authentication), the
// grpc-gateway JSON front with the one error handler that writes the documented error body, the
// token endpoint, health, metrics, periodic reload of files and graceful shutdown. The gRPC door
// checks tokens on a call's headers, before its message is read, and bounds what calls without
// a token may make it read (grpcguard.go).
//
// The JSON front registers the services in-process (grpc-gateway's Register…HandlerServer), and
// each service hands it an adapter whose every method is one Invoke (gateway.go): a JSON request
// then passes through exactly the interceptor a gRPC caller meets, which a gateway registered
// in-process would otherwise skip. Bodies are decoded and answers encoded by internal/jsonwire,
// which also carries the wire rules (unknown fields, duplicate keys, whole numbers, aliases).
//
// Libraries: grpc-gateway for the JSON front (it maps the original API's routes onto the rpcs from the
// contract's routes file), prometheus/client_golang for metrics (the de-facto exposition format
// scrapers expect), google.golang.org/genproto errdetails for status details that gRPC clients
// already know how to read, KimMachineGun/automemlimit to set GOMEMLIMIT from the container's
// cgroup memory limit (cgroup v1 and v2, nested hierarchies: more than a few lines to get right),
// golang.org/x/sync's weighted semaphore for the gRPC read pool (first come first served, with a
// context to give up by: a FIFO of waiters is easy to get subtly wrong by hand).
//
// Under heavy or hostile traffic: large requests are admitted against a memory budget
// (budget.go), gRPC messages before gRPC reads them (grpcread.go), request bodies are paced by a
// minimum rate (bodyrate.go), abusive gRPC connections are closed (grpcconn.go), refusals are
// logged at most a few lines a second (loglimit.go), the kubelet's probes have a listener of their
// own (probe.go) and SIGTERM drains without losing accepted requests (drain.go).
package serve

// Version is the build's version, set at link time with
// -ldflags "-X github.com/yardstick-dev/yardstick/pkg/serve.Version=...". Responses carry it as
// apiVersion.
var Version = "dev"
