package httpfront

import (
	"context"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// The streams of issue 21 (internal/batch's package doc, "How the frame wires it"): the NDJSON
// batch and the group forecast streams. This front owns everything before the engine runs
// (the token, the media type, the stream's admission) and the stream's one log line (through
// reqinfo, written by telemetry.ObserveHTTP with the HTTP status); the engine owns the body and
// the answers. A batch record is run by Dispatch as a unary call of its path's rpc, by name on
// the in-process channel: the record's own permission with the stream's token, its decoding by
// the front's codec, the chain and the handler, the answer or error encoded as the gateway
// encodes a unary call's, without the HTTP request's per-call log line or metrics.

// Streams sets what the stream routes need: the service's group streams by path, the engine's
// options, and the front's codec, with which Dispatch decodes a record and encodes its answer.
func (f *Handler) Streams(groups map[string]batch.OpenGroup, o batch.Options, codec *jsonwire.Codec) {
	f.groups, f.streamOpts, f.marshal = groups, o, marshaler{codec: codec}
}

// Limits makes the front apply each client's limits (internal/quota): a unary call's before its
// body is read (the chain's step takes that decision, quota.Decided), and a stream's
// concurrency, with its records and students paced by the client's rate; a record's context is
// the stream's, pacer included, all the way through the in-process channel, and the chain's
// step lets it pass by that. Without it nothing is limited.
func (f *Handler) Limits(l *quota.Limiter) {
	f.limits = l
}

// serveStream serves a POST to a stream route: the token (401, 403), the media type (415), the
// stream's admission (503 with Retry-After), all before the head; then the engine.
func (f *Handler) serveStream(w http.ResponseWriter, r *http.Request, rt *routes.Route) {
	authorized, ri, ok := f.authorize(w, r, rt)
	if !ok {
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != rpcerr.MediaNDJSON {
		refuse(w, r, rpcerr.UnsupportedMediaType(rpcerr.MediaNDJSON))
		return
	}
	if f.limits != nil {
		var limit quota.Outcome
		if authorized, limit = f.limits.OpenStream(authorized); limit.Policy != "" {
			w.Header()[policyKey] = []string{limit.Policy}
		}
		if limit.Err != nil {
			refuse(w, r, rpcerr.ToHTTP(limit.Err))
			return
		}
		defer limit.Done()
	}
	adm, ok := f.budget.AdmitStream("http")
	if !ok {
		refuse(w, r, rpcerr.ToHTTP(rpcerr.Overloaded(admission.RetryAfter))) // a stream's body has no end to wait for
		return
	}
	defer adm.Release()
	body := r.Body
	if p, ok := body.(*pacedBody); ok {
		body = p.ReadCloser // the engine's idle limit replaces the minimum rate
	}
	start := time.Now()
	var attrs []slog.Attr
	var err error
	switch rt.Stream {
	case routes.Batch:
		claims, _ := authz.ClaimsFrom(authorized)
		var counts batch.Counts
		counts, err = batch.Serve(authorized, w, body, &dispatcher{f: f, claims: claims, stream: adm, ri: ri}, f.streamOpts)
		attrs = []slog.Attr{slog.Int("lines", counts.Lines), slog.Int("records", counts.Records), slog.Int("ok", counts.OK),
			slog.Int("failed", counts.Failed), slog.Bool("complete", counts.Complete), slog.Int("peak_held_bytes", counts.PeakHeld)}
	case routes.GroupStream:
		var counts batch.GroupCounts
		counts, err = batch.ServeGroup(authorized, w, body, f.groups[rt.Path], f.streamOpts)
		attrs = []slog.Attr{slog.Int("lines", counts.Lines), slog.Int("students", counts.Students), slog.Int("invalid", counts.Invalid),
			slog.Bool("complete", counts.Complete)}
	}
	if err != nil {
		attrs = append(attrs, slog.String("stream_error", err.Error()))
	}
	if ri != nil {
		ri.Stream = append(attrs, slog.Float64("stream_ms", float64(time.Since(start).Microseconds())/1000))
	}
}

// notFoundBody is the 404 of a record whose path is not a unary path of this service.
var notFoundBody = batch.StatusAnswer(http.StatusNotFound)

// dispatcher runs one batch stream's records.
type dispatcher struct {
	f      *Handler
	claims token.Claims      // the stream's token, verified once
	stream *admission.Stream // the stream's admission; heavy records wait for budget through it
	ri     *reqinfo.Info     // the stream's request facts (its id, its client)
}

// Dispatch answers one record exactly as serveRoute and the gateway answer a unary call of its
// path with the stream's token: the same permission check, limit, decoding, chain, handler and
// error bodies. A path whose rpc a record may not name (the contract's method option
// yardstick.batch.v1.record) answers 404; a record whose heavy body does not fit the budget
// waits for it.
func (d *dispatcher) Dispatch(ctx context.Context, path string, body []byte) (int, []byte) {
	f := d.f
	rt := f.routes.ByPath[path]
	if rt == nil && servedBy()[path] != "" { // the other service's path: say whose it is
		return http.StatusNotFound, batch.HTTPAnswer(notFound(path))
	}
	if rt == nil || !rt.Record { // the contract's option yardstick.batch.v1.record; not /authToken
		return http.StatusNotFound, notFoundBody
	}
	ri := &reqinfo.Info{Route: path}
	if d.ri != nil {
		ri.ID, ri.ClientID = d.ri.ID, d.ri.ClientID
	}
	ctx, err := authz.Permit(reqinfo.With(ctx, ri), rt, d.claims)
	if err != nil {
		return batch.ErrorAnswer(err)
	}
	if int64(len(body)) > rt.BodyLimit {
		// A line under the stream's limit but over its path's: the unary front's answer.
		return http.StatusRequestEntityTooLarge, batch.ErrorBody(rpcerr.TooLarge(rt.BodyLimit))
	}
	cost := f.budget.Cost(false, int64(len(body)), true)
	if rt.Group {
		cost = f.budget.GroupCostOfBody(body)
	}
	grant, err := d.stream.AdmitRecord(ctx, cost)
	if err != nil {
		return batch.ErrorAnswer(err) // the stream is over: this answer is never written
	}
	defer grant.Release()
	return f.callRecord(ctx, rt.Method, body)
}

// callRecord runs a record as the gateway runs a unary call, without its HTTP machinery: the
// rpc called by name on the in-process channel, the body decoded by the front's codec (a
// problem answered as gatewayErrorHandler answers it), the chain (which takes the record's
// verdict, in ctx) and the method, and the answer encoded by the front's marshaler or the error
// written by rpcerr.Write.
func (f *Handler) callRecord(ctx context.Context, method string, body []byte) (int, []byte) {
	resp, err := f.channel.CallDecoding(ctx, method, func(v any) error {
		if err := f.marshal.Unmarshal(body, v); err != nil {
			return DecodeProblems(err)
		}
		return nil
	})
	var answer []byte
	if err == nil {
		answer, err = f.marshal.Marshal(resp) // a buffer of its own, which the engine holds until it is written
	}
	if err != nil {
		return batch.ErrorAnswer(err)
	}
	return http.StatusOK, answer
}
