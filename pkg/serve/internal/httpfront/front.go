// Package httpfront is the JSON API's front: it finds a request's route (internal/routes) and has
// the gate (internal/gate) admit the call before it reads a byte. It then reads the body (paced,
// within the route's limit, its bytes held in the body pool), admits its memory on the call's
// ticket (internal/admission), decodes it (internal/jsonwire) and calls the route's rpc on the
// in-process channel (internal/inproc); POST /authToken's call has a door of its own. grpc-gateway's
// mux answers the 404 and 405 of paths and methods with no route. A new kind of route (a streaming batch route) gets its case in ServeHTTP.
package httpfront

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/inproc"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/tracing"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// authTokenPath is the token path, served by every service as a call of TokenService.IssueToken.
const authTokenPath = "/authToken"

// policyKey and stateKey are the RateLimit headers' canonical keys, set directly on every answer.
var policyKey, stateKey = http.CanonicalHeaderKey(quota.PolicyHeader), http.CanonicalHeaderKey(quota.StateHeader)

// Options are what the front works with.
type Options struct {
	Routes *routes.Table
	// Gate admits each call and record before its body is read; the front also has its Authz answer
	// /authToken and watch a stream's rights, its Budget admit memory, its Limits share the body pool.
	Gate    *gate.Gate
	Channel *inproc.Channel            // the in-process door: the front calls each route's rpc, and each batch record's, on it
	Gateway http.Handler               // grpc-gateway's mux (NewMux), the services registered on it: the 404 and 405 of paths and methods with no route
	Groups  map[string]batch.OpenGroup // the group forecast streams, by path (stream.go)
	Stream  batch.Options              // the stream engine's options
	Codec   *jsonwire.Codec            // a call's and a record's body and answer
}

// Handler is the JSON API's front (see the package doc).
type Handler struct {
	Options
	bodies *admission.BodyPool // the unary bodies being read, beside the budget
}

// New is the front o describes.
func New(o Options) *Handler {
	var ceiling int64 // the largest body a unary route takes: the body pool reads any one
	for _, rt := range o.Routes.ByPath {
		if rt.Stream == routes.Unary {
			ceiling = max(ceiling, rt.BodyLimit)
		}
	}
	f := &Handler{Options: o}
	if o.Gate != nil && o.Gate.Budget != nil {
		f.bodies = admission.NewBodyPool(o.Gate.Budget, ceiling)
	}
	return f
}

// ServeHTTP serves POST /authToken and the API's routes; the gateway answers the rest with 404 or
// 405. telemetry.ObserveHTTP, outside the front, puts each request's reqinfo.Info in its context.
func (f *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, known := f.Routes.ByPath[r.URL.Path]
	switch {
	case strings.TrimSuffix(r.URL.Path, "/") == authTokenPath: // its own door: forms, Basic, OAuth 2.0
		f.serveAuthToken(w, r)
	case known && rt.Stream != routes.Unary && r.Method != http.MethodPost:
		// A stream's path has no route in the gateway: answered as the gateway answers another
		// method on a unary path (rpcerr.Write's Allow: POST).
		dropBody(w, r)
		rpcerr.WriteStatus(w, http.StatusMethodNotAllowed)
	case r.Method != http.MethodPost || !known:
		dropBody(w, r)
		f.Gateway.ServeHTTP(w, r)
	case rt.Stream != routes.Unary: // the streams (stream.go)
		f.serveStream(w, r, rt)
	default:
		f.serveRoute(w, r, rt)
	}
}

// serveRoute serves a POST to one of the API's routes: the gate (credentials, media type, the
// declared size, the client's limits), the body's bytes, body, memory, in that order, each
// refusal answered before anything later is spent on the request.
func (f *Handler) serveRoute(w http.ResponseWriter, r *http.Request, rt *routes.Route) {
	reqinfo.From(r.Context()).HTTPRequest = r
	var form bool
	check := func() (err error) {
		if err = refuseEncoded(w, r); err == nil {
			form, err = checkMediaType(w, r)
		}
		return err
	}
	admitted, t, err := f.Gate.Admit(r.Context(), gate.Call{Route: rt, Bearer: authz.Bearer(r.Header.Values("Authorization")), Front: "http", Size: r.ContentLength}, check)
	if t.Policy != "" {
		h := w.Header()
		h[policyKey], h[stateKey] = []string{t.Policy}, []string{t.State}
	}
	if err != nil {
		f.refuseAdmit(w, r, rt, err)
		return
	}
	defer t.Release()
	body, ok := f.admitAndRead(w, r, rt, t)
	if !ok {
		return
	}
	tracing.EventInt(r.Context(), "admitted and read", "body.bytes", len(body))
	if form && !jsonwire.IsObject(body) {
		rpcerr.WriteStatus(w, http.StatusUnsupportedMediaType)
		return
	}
	answer, err := f.invoke(admitted, t, rt, body)
	if err != nil {
		rpcerr.Write(w, rpcerr.ToHTTP(err))
		return
	}
	w.Header()["Content-Type"] = jsonType
	_, _ = w.Write(answer)
}

// refuseAdmit answers the gate's refusal, before the body is read, unless the check answered it.
func (f *Handler) refuseAdmit(w http.ResponseWriter, r *http.Request, rt *routes.Route, err error) {
	if errors.Is(err, gate.ErrTooLarge) {
		refuse(w, r, f.tooLarge(rt, rt.BodyLimit))
	} else if !errors.Is(err, errAnswered) {
		refuse(w, r, rpcerr.ToHTTP(err))
	}
}

// invoke answers an admitted call or batch record as grpc-gateway's handler of its path would:
// the body decoded by the front's codec, the rpc called on the in-process channel with the ticket
// t. A body whose problems are each a field's still reaches the handler (WithFieldProblems).
func (f *Handler) invoke(ctx context.Context, t *gate.Ticket, rt *routes.Route, body []byte) ([]byte, error) {
	req, err := f.Channel.NewRequest(rt.Method)
	if err != nil {
		return nil, err
	}
	fieldErr := f.Codec.Unmarshal(body, req)
	if fieldErr != nil && !FieldsOnly(fieldErr) {
		return nil, DecodeProblems(fieldErr)
	}
	resp, err := f.Channel.Call(ctx, t, rt.Method, req)
	switch {
	case fieldErr != nil:
		return nil, WithFieldProblems(fieldErr, err)
	case err != nil:
		return nil, err
	}
	return marshal(f.Codec, resp)
}

// serveAuthToken serves POST /authToken as a call of IssueToken whose door reads and answers the
// shapes the codec does not (forms, HTTP Basic, OAuth 2.0; authz.AnswerAuthToken): the gate (its
// public rule, a content coding, the declared size), then the door calls the rpc through the
// chain with the ticket. The login throttle is the rpc's own, on either port.
func (f *Handler) serveAuthToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		rpcerr.WriteStatus(w, http.StatusMethodNotAllowed)
		return
	}
	rt := f.Routes.ByPath[authTokenPath]
	reqinfo.From(r.Context()).HTTPRequest = r // the caller's address, for the login throttle
	admitted, t, err := f.Gate.Admit(r.Context(), gate.Call{Route: rt, Front: "http", Size: r.ContentLength}, func() error { return refuseEncoded(w, r) })
	if err != nil {
		authz.NoStore(w.Header()) // the 413, as the door's own (the check's 415 was sent without)
		f.refuseAdmit(w, r, rt, err)
		return
	}
	defer t.Release()
	f.Gate.Authz.AnswerAuthToken(w, r, func(req *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
		resp, err := f.Channel.Call(admitted, t, rt.Method, req)
		out, _ := resp.(*authv1.IssueTokenResponse) // nil with an error, or with none: AnswerAuthToken's 500
		return out, err
	})
}

// jsonType is every answer's Content-Type header value. Nothing writes to it.
var jsonType = []string{"application/json"}

// errAnswered is the front's own refusal of a call's headers (the gate's check), answered already.
var errAnswered = errors.New("httpfront: the request was refused and answered")

// checkMediaType refuses a media type other than JSON (415, errAnswered), and reports whether the
// body was labelled form-encoded: curl -d labels every body so, and a body that is JSON is then
// taken as JSON.
func checkMediaType(w http.ResponseWriter, r *http.Request) (form bool, err error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" || ct == "application/json" {
		return false, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")):
		return false, nil
	case err == nil && mt == "application/x-www-form-urlencoded":
		return true, nil
	default:
		dropBody(w, r)
		rpcerr.WriteStatus(w, http.StatusUnsupportedMediaType)
		return false, errAnswered
	}
}

// admitAndRead holds an undeclared body to the route's limit and its bytes in the body pool while
// it is read (a slow upload holds what it sent, not what its decoding will cost), then admits the
// request's memory on the call's ticket, waiting in the client's queue. A refusal is answered here.
func (f *Handler) admitAndRead(w http.ResponseWriter, r *http.Request, rt *routes.Route, t *gate.Ticket) ([]byte, bool) {
	limit, client := rt.BodyLimit, t.Client
	read, err := f.bodies.Take(r.Context(), client, f.Gate.Limits.Concurrency(client), rt.Group != nil, r.ContentLength, limit)
	if err != nil {
		// Answered before the body is read (without full duplex net/http would first read up to
		// 256 KiB of it at the caller's pace); then the rest is read into nothing at the paced
		// rate: the caller is authenticated and still sending, and a connection closed under its
		// upload would reset before it read the answer.
		rc := http.NewResponseController(w)
		_ = rc.EnableFullDuplex()
		rpcerr.Write(w, rpcerr.ToHTTP(err))
		_ = rc.Flush()
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, limit))
		return nil, false
	}
	defer read.Done() // once admitted, the body's bytes are in its grant
	body, err := readBody(http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
	// AsType, not errors.As: As's target escapes, one allocation on every call (TestFrontHandlerAllocations).
	switch _, tooLarge := errors.AsType[*http.MaxBytesError](err); {
	case err == nil:
		if err = t.AdmitBody(r.Context(), body); err == nil {
			return body, true
		}
		rpcerr.Write(w, rpcerr.ToHTTP(err))
	case tooLarge:
		rpcerr.Write(w, f.tooLarge(rt, limit))
	case errors.Is(err, errSlowBody):
		dropBody(w, r)
		rpcerr.WriteStatus(w, http.StatusRequestTimeout)
	default: // cut off
		rpcerr.Write(w, rpcerr.HTTP{Status: http.StatusBadRequest, Body: rpcerr.BodyFor(http.StatusBadRequest, errors.New("request body could not be read"))})
	}
	return nil, false
}

// readBody reads a whole body into one buffer sized by Content-Length when sent: io.ReadAll would
// copy a 16 MiB group body a dozen times, bytes.Buffer.ReadFrom want 512 bytes spare a call.
func readBody(r io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return io.ReadAll(r)
	}
	buf := make([]byte, length+1) // one spare byte tells a body longer than announced
	n, err := io.ReadFull(r, buf)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return buf[:n], nil
	case err != nil:
		return nil, err
	}
	rest, err := io.ReadAll(r)
	return append(buf[:n], rest...), err
}

// refuseEncoded refuses a body sent with a content coding (gzip, br, ...), errAnswered when it
// did: a coding the front does not take (it reads a body as sent), not malformed JSON, which
// RFC 9110 answers with 415 (§15.5.16) and Accept-Encoding: identity (§12.5.3).
func refuseEncoded(w http.ResponseWriter, r *http.Request) error {
	for _, v := range r.Header.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				w.Header().Set("Accept-Encoding", "identity")
				refuse(w, r, rpcerr.HTTP{Status: http.StatusUnsupportedMediaType, Body: rpcerr.ErrorBody{
					Message: "Unsupported media type.", ExceptionType: rpcerr.ExceptionUnsupportedType,
					AdditionalInfo: "Send the body without Content-Encoding: it is read as sent.",
				}})
				return errAnswered
			}
		}
	}
	return nil
}
