// Package serve is the serving frame both Yardstick services run in: Main runs a service (its
// Identity, Config and Service) as a Server, a gRPC server and a JSON front with health, metrics,
// documents, periodic reload and the drain on SIGTERM. Handlers answer errors with serve/rpcerr;
// clients read NDJSON batch lines by the engine's rules with serve/ndjson.
//
// The frame wires packages of one concern each, under internal/: docs/architecture.md lists
// them and the libraries they build on, draws their import graph (TestImportGraph holds it to the
// code) and follows a JSON, a gRPC and a batch call through their files.
package serve

// Version is the build's version, set at link time with
// -ldflags "-X github.com/yardstick-dev/yardstick/pkg/serve.Version=...". Responses carry it as
// apiVersion.
var Version = "dev"
