// Package quota is each client's fair share of a service (docs/operations.md, "A fair share for
// every client"): a rate of requests with a burst, one budget for the whole deployment when
// Redis is configured, and a bound on the client's calls in progress on this replica.
//
// The rate is a generic cell rate algorithm (GCRA): each client has one number, the time at
// which its bucket is full again (its theoretical arrival time); a request moves it one
// interval (1/rate) later, and is refused when that would put it more than burst intervals
// ahead of now. One number per client means one key in Redis and one atomic script a call:
// rateScript reads Redis's own clock (so the replicas' clocks need not agree), decides and
// writes in a single EVALSHA round trip. Without Redis (none configured, or unreachable), each
// replica runs the same arithmetic in its own memory with rate/N and ⌈burst/N⌉ (N =
// YARDSTICK_REPLICAS), so the deployment as a whole still gives about the client's rate; it
// logs one WARN when Redis stops answering and one INFO when it answers again, and asks Redis
// again at most once a second meanwhile (one caller tries, the others decide locally).
//
// Libraries: github.com/redis/go-redis/v9, as pkg/token's login throttle (its Script is
// EVALSHA with EVAL after a Redis restart). go-redis/redis_rate was not taken: it is the same
// GCRA in one Lua script, but its key holds the time to full alone, so after a reload the time
// owed would count at the new interval (a raised rate would not apply at once: gcra rescales it),
// it names its keys itself (rate:…, not RedisKeyPrefix), and it would be a second module pinned
// for a script of twenty lines. golang.org/x/time/rate is not shared across processes, and the
// memory fallback must be the script's arithmetic: so the GCRA is by hand (gcra, rateScript), as
// is the count of calls in progress (a map under the limiter's mutex).
//
// Where the frame calls it (the gate, internal/gate: Rate then Acquire for a call, OpenStream for
// a stream, RecordSlot for a record; Pace for each record or student a stream reads) is told in
// docs/architecture.md.
package quota
