// Package batch is the engine of issue 21's streams, independent of routing: the NDJSON batch
// stream (POST /api/score/batch, POST /api/forecast/batch) and the group forecast stream
// (POST /api/forecast/{reading,math}/group/stream) of issue 21, "batches at district scale".
// The frame routes, authenticates and admits a stream, then hands the body and the response
// writer to Serve or ServeGroup.
//
// The group stream's engine knows nothing of measure (pkg/serve imports only pkg/token and
// proto): the forecast service implements GroupStream on measure.GroupAccumulator, which gives
// the unary Group's numbers bit for bit in constant memory (group_test.go's groupService is
// the pattern, in miniature).
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
//   - Memory: at most Options.InFlight records (16) are held between the body and the answers,
//     and at most Options.MaxHeld bytes (32 MiB) of their ids, bodies and answers: past it the
//     engine neither reads nor dispatches, except the oldest record, whose answer is the next
//     to go out (holding it back would wait for memory only it can free). The bound is MaxHeld
//     plus one line plus the answers of the dispatches running when it was reached (at most
//     Workers), plus one 64 KiB read buffer and one 32 KiB write buffer: within the design's
//     64 MiB a stream while a unary answer stays under a few MiB. A line over MaxLine (1 MiB)
//     is skipped to its newline as it arrives, never held. When the caller stops reading, the
//     writes block, the budget fills and the engine stops reading the body: TCP (or HTTP/2)
//     flow control then stops the caller. Counts.PeakHeld reports the peak.
//   - Flushing: the head goes out before any line is read (the caller knows it was admitted),
//     and what was written is flushed whenever the next answer is not ready, so a caller that
//     has sent n records gets their n answers while its body is still open.
//   - Cancellation: when the context ends, or a read or write fails (the caller is gone), the
//     read and write in progress are unblocked through their deadlines, no new record is
//     dispatched, the dispatches in progress see their context cancelled, and Serve returns
//     only after all of them have. A body that sends nothing, or a write that the caller does
//     not take, for Options.Idle (60 s) ends the stream the same way (ErrIdle for the body).
//     A caller that leaves while every record it sent is still being dispatched is noticed at
//     the next read or write, that is when a dispatch ends.
//   - Faults: a dispatcher that panics or answers bytes that are not JSON makes that record a
//     documented 500; the stream goes on.
//
// The deadlines need a ResponseWriter that http.ResponseController can reach: net/http's own,
// or a wrapper with an Unwrap method (else ErrNoDeadlines and a 500). Serve enables full duplex on HTTP/1 (otherwise net/http
// reads the whole body before the first answer leaves) and sets the connection's read and
// write deadlines itself, overriding the server's timeouts for this request.
//
// # How the frame wires it
//
//   - Route: POST /api/score/batch (scoring) and POST /api/forecast/batch (forecast) to Serve;
//     POST /api/forecast/reading/group/stream and /math/group/stream to ServeGroup. Content type
//     application/x-ndjson (else 415), not bound by the unary body limit nor by the minimum body
//     rate; Options.Idle replaces the latter.
//   - Auth before Serve: 401 without a valid token, 403 without score:batch / forecast:batch
//     (forecast:group for the group stream as well). Each record's own permission is the
//     Dispatcher's: it runs the record through the same chain as a unary call of its path
//     (authorisation with the stream's token, validation, the handler, the error mapping) and
//     answers 403 with the PermissionDenied body for a path the token lacks, 404 with the
//     NotFound body for a path that is not a unary path of the service (the other service's,
//     a batch or stream path included: no recursion). A record is never answered 503: the
//     Dispatcher waits for the admission budget instead of refusing (a full budget slows the
//     stream down).
//   - Admission per stream: a stream takes one admission slot for its whole life (503 before the
//     head when none is free); heavy records also go through the budget one by one, waiting.
//   - The client's rate (internal/quota): the stream's context carries its client's pacer, and
//     Serve and ServeGroup call quota.Pace for each record or student they read, which waits
//     while the rate is spent (never refuses: no line is answered 429). The record's context,
//     the stream's, carries the pacer on through the Dispatcher to the chain, whose limit step
//     lets a record pass by it.
//   - One log line per stream when Serve returns, with Counts (lines, records, ok, failed,
//     complete) or GroupCounts, the duration and the error (nil, ErrIdle, a cancelled context,
//     the caller's connection error); answer lines carry no request id.
//   - gRPC's bidirectional streams (ScoreBatch, ForecastBatch) carry the same records as
//     messages: Ordered is their engine (ordered.go), the frame's grpcbatch.go their dispatcher,
//     and gRPC's framing and flow control do what the line reader and the deadlines do here.
//     ForecastGroupStream is the forecast service's own handler.
//
// Kept by hand: the stream's byte budget (budget.go) is a condition variable, not
// golang.org/x/sync's weighted semaphore, because it is not one: the oldest unanswered record
// may always go past the bound (answers are written in order, so holding it back would wait for
// memory only its own answer can free), and a record waits while the stream holds the bound,
// not until its own size fits. A semaphore would deadlock on the first case and refuse a line
// larger than the bound on the second.
package batch
