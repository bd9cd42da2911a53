// Package token owns Yardstick's authentication: the client registry (a YAML clients file with
// hashes of the client secrets: argon2id, or salted SHA-256 for the 256-bit secrets the
// yardstick-token tool generates), the bounded pool that runs argon2 checks, the Ed25519 signing keys (a directory of PEM files, one
// per key id), issuing JWT access tokens for a client and a service, and verifying them. It has no
// HTTP and no gRPC in it; the serving frame (pkg/serve) maps its errors to 401, 403 and 429.
//
// The package is the lock on the door: [Issuer.Verify] rejects every forged, stale or misdirected
// token with [ErrNotAuthenticated], and no error, log line or summary ever carries a secret or a
// token. Reasons attached to errors come from a fixed set of phrases, never from the input.
// The only log lines (Options.Logger) say whether the throttle's limits are shared through Redis.
//
// The permissions a clients file may grant are the contract's, not a list kept here: each is the
// method option yardstick.auth.v1.permission (or also_permission) of an rpc and belongs to the
// service whose package declares the rpc, read from the registered contract by
// proto/yardstick.Permissions each time a clients file is read (about 10 µs). Only PermAll and the
// two services are named here. The price: importing the contract links the generated gRPC and
// gateway code into every binary that uses this package (yardstick-token grew from 6 to 17 MB).
//
// Libraries, and why:
//   - github.com/golang-jwt/jwt/v5 parses and signs JWTs. It is the de facto Go JWT library, lets
//     us pin the algorithm (WithValidMethods), checks exp/nbf/iat with a leeway, aud and iss, and
//     runs our own claim checks through its ClaimsValidator hook, so we do not hand-roll JOSE.
//   - golang.org/x/crypto/argon2 computes argon2id (RFC 9106), the password hash the design asks
//     for; the PHC string around it is ours, because its format is small and its parameters must
//     be capped before any hashing.
//   - gopkg.in/yaml.v3 reads the clients file. Its yaml.Node tree carries line numbers, so every
//     problem in the file is reported as file:line.
//   - golang.org/x/time/rate was considered for throttling and not used: a failure is counted
//     only after the secret check failed, possibly taking a bucket below zero when guesses were
//     checked at once (the debt is then waited out), and an empty bucket must answer at once
//     with its wait, without reserving anything. rate.Limiter allows neither reading the wait
//     without reserving nor a debt beyond its burst; our bucket (throttle.go) is short.
//   - github.com/redis/go-redis/v9 shares the throttle's buckets among replicas when
//     Options.RedisURL is set (throttle_redis.go). It is the client the Redis project itself
//     maintains, released often, with connection pooling, per-call timeouts, redis:// and
//     rediss:// URLs, and Script (EVALSHA with a fall back to EVAL), which runs the bucket
//     arithmetic atomically inside Redis: a failure is counted in all three buckets or none.
//     The connection and its breaker (SharedRedis: short timeouts, no retries, Redis left alone
//     for a second after a failure) are exported for the serving frame's client limits, which
//     share the same Redis and must behave the same when it is gone.
package token
