// Package batch is the engine of the frame's streams, independent of routing: the NDJSON batch
// stream (Serve), the group forecast stream (ServeGroup) and gRPC's batch streams (Ordered, whose
// records arrive as messages). The frame routes, authenticates, admits and paces a stream
// (docs/architecture.md), then hands over the body and the response writer. The forecast service
// implements GroupStream (group_test.go's groupService is the pattern, in miniature).
//
// # What the engine guarantees
//
//   - Order and bytes: one answer line per record or broken line, in input order, as
//     docs/api.md#batches describes; a record's body is the dispatcher's bytes verbatim, a broken
//     line's the service's error body. A stream cut short ends without its summary line, so the
//     caller can tell; one ended by Options.Revoked ends with its {"end":…} line instead.
//   - Memory: at most Options.InFlight records and Options.MaxHeld bytes of their ids, bodies
//     and answers are held, save the oldest record (budget.go), plus one line, the answers in
//     progress and the read and write buffers. A line over MaxLine is skipped as it arrives. When
//     the caller stops reading, the engine stops reading the body: flow control stops the caller.
//   - Flushing: the head goes out before any line is read, and what was written is flushed
//     whenever the next answer is not ready: a caller that has sent n records gets their n
//     answers while its body is still open.
//   - Half-close: once the body has ended, the request's context ending is not taken for the
//     caller's departure (conn.detach says why); a caller really gone fails the next write.
//   - Cancellation: when the context ends, a read or write fails, or the body or the caller is
//     idle for Options.Idle, the read and write in progress are unblocked through their deadlines
//     (ErrNoDeadlines), and Serve returns once the dispatches in progress, cancelled, have.
//   - Faults: a dispatcher that panics or answers bytes that are not JSON makes that record a
//     documented 500; the stream goes on.
//   - No record is answered 503: the dispatcher waits for the memory budget instead, and
//     quota.Pace, called for each record or group entry read, waits for the client's rate.
//
// The stream's byte budget (budget.go) is a condition variable, not a weighted semaphore: a line
// is let through while the stream holds less than the bound, before its size is known, and the
// oldest unanswered record always goes past the bound (holding it back would wait for memory only
// its own answer can free), where a semaphore would wait forever.
package batch
