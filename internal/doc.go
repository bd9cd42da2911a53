// Package internal holds nothing itself: its packages are what several of the workspace's
// modules share and no one outside it should import. safefile reads an operator's files with
// a bound on every read (pkg/token's clients and keys, pkg/measure's content); proc starts a
// built binary on free loopback ports, waits for it and stops it (the benchmarks, the soak
// runs, the end-to-end tests, the deployment checks); redistest runs a real redis-server for a
// test (the login throttle's in pkg/token, the clients' limits' in pkg/serve); calltest makes a
// test's HTTP call of a server it runs and waits for a state the server reaches (pkg/serve's
// tests, services/servetest). The module needs
// nothing but the standard library, so importing it adds nothing to pkg/measure's or
// pkg/token's graph.
package internal
