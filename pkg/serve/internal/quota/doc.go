// Package quota is each client's fair share of a service (docs/operations.md, "A fair share for
// every client"): a rate of requests with a burst, one budget for the whole deployment when
// Redis is configured, and a bound on the client's calls in progress on this replica.
//
// The rate is a generic cell rate algorithm (GCRA): each client has one number, the time its
// bucket is full again; a request moves it one interval (1/rate) later, and is refused when that
// would put it more than burst intervals ahead of now. One number per client is one key in Redis
// and one EVALSHA round trip a call (rateScript, on Redis's clock, so the replicas' clocks need
// not agree). Without Redis (none configured, or unreachable), each replica runs the same
// arithmetic in memory with rate/N and ⌈burst/N⌉ (N = YARDSTICK_REPLICAS), so the deployment still
// gives about the client's rate; it logs one WARN when Redis stops answering and one INFO when it
// is back, asking again at most once a second meanwhile.
//
// Redis through github.com/redis/go-redis/v9, as pkg/token's login throttle (EVAL after a Redis
// restart). go-redis/redis_rate was not taken: its key holds the time to full alone, so a raised
// rate would not apply at once after a reload (gcra rescales the time owed), it names its keys
// itself, and it would be a second module pinned for a twenty-line script. golang.org/x/time/rate
// is not shared across processes, and the memory fallback must be the script's arithmetic: so
// the GCRA is by hand.
//
// The gate calls Rate then Acquire for a call, OpenStream for a stream and RecordSlot for a
// record; the batch engine calls Pace for each record or group entry a stream reads.
package quota
