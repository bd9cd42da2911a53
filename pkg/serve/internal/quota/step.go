package quota

// Header names, as gRPC metadata (lower case) and as the JSON front writes them.
const (
	PolicyHeader = "RateLimit-Policy"
	StateHeader  = "RateLimit"
	PolicyMD     = "ratelimit-policy"
	StateMD      = "ratelimit"
)

// Held reports whether the call holds a place of its client's concurrency (Done gives it back).
func (o Outcome) Held() bool { return o.slot != nil && !o.slot.released.Load() }
