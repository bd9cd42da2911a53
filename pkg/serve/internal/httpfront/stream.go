package httpfront

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// The NDJSON batch and group forecast streams: the front owns what comes before the engine
// (internal/batch) and the counts for the stream's log line; the engine owns body and answers.

// serveStream serves a POST to a stream route: the gate (the token, 401 and 403; the media type,
// 415; the client's concurrency, 429; the stream's reserve of the budget, 429 or 503 with
// Retry-After), all before the head; then the engine.
func (f *Handler) serveStream(w http.ResponseWriter, r *http.Request, rt *routes.Route) {
	ri := reqinfo.From(r.Context())
	ri.HTTPRequest = r
	check := func() error {
		if err := refuseEncoded(w, r); err != nil {
			return err
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != rpcerr.MediaNDJSON {
			refuse(w, r, rpcerr.UnsupportedMediaType(rpcerr.MediaNDJSON))
			return errAnswered
		}
		return nil
	}
	bearer := authz.Bearer(r.Header.Values("Authorization"))
	authorized, t, err := f.Gate.Admit(r.Context(), gate.Call{Route: rt, Bearer: bearer, Front: "http", Stream: true}, check)
	if t.Policy != "" {
		w.Header()[policyKey] = []string{t.Policy}
	}
	if err != nil {
		f.refuseAdmit(w, r, rt, err) // a stream's body has no end to wait for: refused at once
		return
	}
	defer t.Release()
	adm := t.Stream()
	body := r.Body
	if p, ok := body.(*pacedBody); ok {
		body = p.ReadCloser // the engine's idle limit replaces the minimum rate
	}
	continueIfExpected(w, r)
	start := time.Now()
	// The stream's rights are checked again at each reload and at its token's expiry: once they
	// are gone, the engine answers what it read and ends with the answer a call would get.
	revoked := make(chan error, 1)
	watching, stopWatch := context.WithCancel(authorized)
	defer stopWatch()
	f.Gate.Authz.Watch(watching, rt, bearer, func(err error) { denied, _ := authz.RevokedErr(err); revoked <- denied })
	o := f.Stream
	o.Revoked = revoked
	o.Hold = adm.Hold // a record's bytes, from the budget as they arrive
	var attrs []slog.Attr
	switch rt.Stream {
	case routes.Batch:
		var counts batch.Counts
		counts, err = batch.Serve(authorized, w, body, (&dispatcher{f: f, bearer: bearer, stream: adm, ri: ri}).Dispatch, o)
		attrs = []slog.Attr{slog.Int("lines", counts.Lines), slog.Int("records", counts.Records), slog.Int("ok", counts.OK),
			slog.Int("failed", counts.Failed), slog.Bool("complete", counts.Complete), slog.Int("peak_held_bytes", counts.PeakHeld)}
	case routes.GroupStream:
		var counts batch.GroupCounts
		counts, err = batch.ServeGroup(authorized, w, body, f.Groups[rt.Path], o)
		attrs = []slog.Attr{slog.Int("lines", counts.Lines), slog.Int("students", counts.Entries), slog.Int("invalid", counts.Invalid),
			slog.Bool("complete", counts.Complete)}
	}
	if err != nil {
		attrs = append(attrs, slog.String("stream_error", err.Error()))
	}
	ri.Stream = append(attrs, slog.Float64("stream_ms", float64(time.Since(start).Microseconds())/1000))
}

// notFoundJSON is the 404 of a record whose path a record may not name, encoded once.
var notFoundJSON = rpcerr.JSON(rpcerr.BodyFor(http.StatusNotFound, nil))

type dispatcher struct {
	f      *Handler
	bearer string            // the stream's token: each record is authorized with it, as a call
	stream *admission.Stream // the stream's admission; heavy records wait for budget through it
	ri     *reqinfo.Info     // the stream's request facts (its id, its client)
}

// Dispatch answers one record exactly as serveRoute answers a unary call of its path with the
// stream's token (invoke), without the HTTP request's log line or metrics. The token is checked
// for each record against the clients as they are now, as a call made now would be (401 once it
// expired or its client is gone, 403 for a permission taken away); a heavy record waits for
// budget. A path is matched as a call's is (one trailing slash is the same path); a path whose
// rpc a record may not name (yardstick.batch.v1.record) answers 404.
func (d *dispatcher) Dispatch(ctx context.Context, path string, body []byte) (int, []byte) {
	f := d.f
	if len(path) > 1 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	rt := f.Routes.ByPath[path]
	if rt == nil { // the other service's path: say whose it is; else the nearest path, if any
		return http.StatusNotFound, rpcerr.JSON(notFound(path, f.NearestPath).Body)
	}
	if !rt.Record { // not /authToken either
		return http.StatusNotFound, notFoundJSON
	}
	ri := &reqinfo.Info{Route: path, ID: d.ri.ID, ClientID: d.ri.ClientID}
	cost := f.Gate.Budget.CostOfBody(rt.Group, body)
	// A line over its path's limit is refused (413) once authorized, as a call's declared size is.
	call := gate.Call{Route: rt, Bearer: d.bearer, Front: "http", Size: int64(len(body)), Record: d.stream, Cost: cost}
	ctx, t, err := f.Gate.Admit(reqinfo.With(ctx, ri), call, nil)
	switch {
	case errors.Is(err, gate.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, rpcerr.JSON(rpcerr.TooLarge(rt.BodyLimit).Body)
	case err != nil:
		return batch.ErrorAnswer(err) // a refusal of the token, or the stream is over: this answer is never written
	}
	defer t.Release()
	answer, err := f.invoke(ctx, t, rt, body) // a buffer of its own, which the engine holds until it is written
	if err != nil {
		return batch.ErrorAnswer(err)
	}
	return http.StatusOK, answer
}
