// Package batch is the engine of the frame's streams, independent of routing: the NDJSON batch
// stream (Serve: POST /api/score/batch, /api/forecast/batch), the group forecast stream
// (ServeGroup: POST /api/forecast/{reading,math}/group/stream) and gRPC's batch streams (Ordered,
// whose records arrive as messages). The frame routes, authenticates, admits and paces a stream
// (docs/architecture.md walks it), then hands over the body and the response writer. The group
// stream's engine knows nothing of measure: the forecast service implements GroupStream on
// measure.GroupAccumulator, which gives the unary Group's numbers bit for bit in constant memory
// (group_test.go's groupService is the pattern, in miniature).
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
//     (budget.go). The bound is MaxHeld plus one line plus the answers of the dispatches running
//     when it was reached (at most Workers), plus one 64 KiB read buffer and one 32 KiB write
//     buffer: within the design's 64 MiB a stream. A line over MaxLine is skipped to its newline
//     as it arrives, never held. When the caller stops reading, the writes block, the budget
//     fills and the engine stops reading the body: TCP (or HTTP/2) flow control then stops the
//     caller. Counts.PeakHeld reports the peak.
//   - Flushing: the head goes out before any line is read (the caller knows it was admitted),
//     and what was written is flushed whenever the next answer is not ready, so a caller that
//     has sent n records gets their n answers while its body is still open.
//   - Half-close: once the body has ended, the request's context ending is not taken for the
//     caller's departure (net/http ends it when the caller closes its side of the connection
//     after its body, before it has read an answer); a caller really gone fails the next write.
//   - Cancellation: when the context ends, or a read or write fails (the caller is gone), the
//     read and write in progress are unblocked through their deadlines, no new record is
//     dispatched, the dispatches in progress see their context cancelled, and Serve returns
//     only after all of them have. A body that sends nothing, or a write that the caller does
//     not take, for Options.Idle ends the stream the same way (ErrIdle for the body). A caller
//     that leaves while every record it sent is still being dispatched is noticed at the next
//     read or write, that is when a dispatch ends.
//   - Faults: a dispatcher that panics or answers bytes that are not JSON makes that record a
//     documented 500; the stream goes on.
//
// The engine sets the connection's read and write deadlines itself (see ErrNoDeadlines),
// overriding the server's timeouts for this request. It answers no record 503: the dispatcher
// waits for the memory budget instead (a full budget slows the stream down), and quota.Pace,
// called for each record or student read, waits for the client's rate.
//
// Kept by hand: the stream's byte budget (budget.go) is a condition variable, not
// golang.org/x/sync's weighted semaphore, because it is not one. A line is let through while the
// stream holds less than the bound, before it is read, when its size is not known yet; and the
// oldest unanswered record always goes past the bound (answers are written in order, so holding
// it back would wait for memory only its own answer can free). A semaphore takes a known weight
// and never lets the total past its size: it would wait forever on the oldest record.
package batch
