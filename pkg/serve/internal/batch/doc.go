// Package batch is the engine of the frame's streams, independent of routing: the NDJSON batch
// stream (Serve), the group forecast stream (ServeGroup) and gRPC's batch streams (Ordered, whose
// records arrive as messages). The frame routes, authenticates, admits and paces a stream
// (docs/architecture.md), then hands over the body and the response writer. The group engine
// knows nothing of measure: the forecast service implements GroupStream (group_test.go's
// groupService is the pattern, in miniature).
//
// # What the engine guarantees
//
//   - Order: answers are written in input order, one per record or broken line, whatever order
//     the dispatches finish in. Blank lines get no answer but count in line numbers.
//   - Bytes: a record's answer is {"id":<the caller's id token, as spelled>,"status":S,
//     "body":<the dispatcher's bytes, verbatim>}; a broken line's is {"line":N,"status":400 or
//     413,"body":<the service's error body, written by rpcerr.Write>}; the last line is
//     {"summary":{"records","ok","failed"}}. A stream cut short (the caller went away, an idle
//     body, a read error, the context cancelled) ends without a summary, so the caller can tell.
//     A stream ended by Options.Revoked (its caller's rights are gone) answers the records read
//     and ends with {"end":{"status":S,"body":B}}, the answer a call would get, instead.
//   - Memory: at most Options.InFlight records are held between the body and the answers, and
//     at most Options.MaxHeld bytes of their ids, bodies and answers, save the oldest record
//     (budget.go); plus one line, the answers of the dispatches running (at most Workers) and
//     the 64 KiB read and 32 KiB write buffers. A line over MaxLine is skipped as it arrives,
//     never held. When the caller stops reading, the writes block, the budget fills and the
//     engine stops reading the body: flow control then stops the caller.
//   - Flushing: the head goes out before any line is read (the caller knows it was admitted),
//     and what was written is flushed whenever the next answer is not ready, so a caller that
//     has sent n records gets their n answers while its body is still open.
//   - Half-close: once the body has ended, the request's context ending is not taken for the
//     caller's departure (conn.detach says why); a caller really gone fails the next write.
//   - Cancellation: when the context ends, or a read or write fails, the read and write in
//     progress are unblocked through their deadlines, no new record is dispatched, the
//     dispatches in progress see their context cancelled, and Serve returns only after all of
//     them have. A body that sends nothing, or a write the caller does not take, for
//     Options.Idle ends the stream the same way (ErrIdle for the body).
//   - Faults: a dispatcher that panics or answers bytes that are not JSON makes that record a
//     documented 500; the stream goes on.
//
// The engine sets the connection's read and write deadlines itself (see ErrNoDeadlines). It
// answers no record 503: the dispatcher waits for the memory budget instead, and quota.Pace,
// called for each record or student read, waits for the client's rate.
//
// The stream's byte budget (budget.go) is a condition variable, not a weighted semaphore: a line
// is let through while the stream holds less than the bound, before its size is known, and the
// oldest unanswered record always goes past the bound (holding it back would wait for memory only
// its own answer can free). A semaphore would wait forever on the oldest record.
package batch
