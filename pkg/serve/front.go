package serve

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// gatewayHeader is the request header of every authorized call the front passes to the gateway.
// Nothing writes to it.
var gatewayHeader = http.Header{"Content-Type": {"application/json"}}

// apiFront is the JSON API: it checks credentials before it reads a body, enforces the media type
// and the body limit, then hands the request to the gateway, which runs it in-process through the
// same interceptor as a gRPC call (gateway.go).
func (s *Server) apiFront(gw http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimSuffix(r.URL.Path, "/") == "/authToken" { // its own handler: forms, Basic, OAuth 2.0 (authtoken.go)
			if r.Method == http.MethodPost && contentEncoded(r.Header) {
				dropBody(w, r)
				writeUnsupportedEncoding(w)
				return
			}
			s.authz.ServeAuthToken(w, r)
			return
		}
		rt, known := s.routes.ByPath[r.URL.Path]
		if r.Method != http.MethodPost || !known {
			dropBody(w, r)
			gw.ServeHTTP(w, r) // the gateway answers 404 and 405 through routingErrorHandler
			return
		}
		method := rt.Method
		fc := &frontCall{server: s}
		ctx := context.WithValue(r.Context(), frontKey{}, fc)
		ri := reqinfo.From(ctx)
		if ri != nil {
			ri.HTTPRequest = r
		}
		// Credentials first: a caller without them learns nothing of the body's schema, and makes
		// us read no body. The interceptor takes this verdict (Invoke runs it for the same method).
		authorized, err := s.authz.Authorize(ctx, rt, authz.Bearer(r.Header.Values("Authorization")))
		if err != nil {
			dropBody(w, r)
			rpcerr.Write(w, rpcerr.ToHTTP(err))
			return
		}
		if !rt.Rule.Public {
			fc.authorized, fc.method = authorized, method
		}
		if contentEncoded(r.Header) {
			dropBody(w, r)
			writeUnsupportedEncoding(w)
			return
		}
		form := false
		if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
			mt, _, err := mime.ParseMediaType(ct)
			switch {
			case err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")):
			case err == nil && mt == "application/x-www-form-urlencoded":
				// curl -d labels every body form-encoded; a body that is JSON is taken as JSON.
				form = true
			default:
				dropBody(w, r)
				rpcerr.WriteStatus(w, http.StatusUnsupportedMediaType)
				return
			}
		}

		limit := rt.BodyLimit
		if r.ContentLength > limit {
			dropBody(w, r)
			rpcerr.WriteStatus(w, http.StatusRequestEntityTooLarge)
			return
		}
		// Heavy requests take their share of the memory budget before the body is read.
		adm, err := s.budget.AdmitJSON(rt.Group, r.ContentLength, limit)
		if err != nil {
			rpcerr.Write(w, rpcerr.ToHTTP(err))
			discardBody(w, r.Body, limit)
			return
		}
		defer adm.Release()
		body, err := readBody(http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
		switch {
		case err != nil:
		case rt.Group:
			adm.Shrink(s.budget.GroupCostOfBody(body)) // the students it can hold, now they can be counted
		case r.ContentLength < 0:
			adm.Shrink(s.budget.Cost(rt.Group, int64(len(body)), true))
		}
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				rpcerr.WriteStatus(w, http.StatusRequestEntityTooLarge)
				return
			}
			if errors.Is(err, errSlowBody) {
				dropBody(w, r)
				rpcerr.WriteStatus(w, http.StatusRequestTimeout)
				return
			}
			rpcerr.Write(w, rpcerr.HTTP{Status: http.StatusBadRequest, Body: rpcerr.BodyFor(http.StatusBadRequest, errors.New("request body could not be read"))})
			return
		}

		if form && jsonwire.IsObject(body) {
			form = false
		}
		if form {
			rpcerr.WriteStatus(w, http.StatusUnsupportedMediaType)
			return
		}
		r = r.WithContext(ctx)
		r.Body = &frontBody{data: body, info: ri}
		r.ContentLength = int64(len(body))
		if fc.authorized != nil {
			// The verdict travels in the context, and everything else the call needs in
			// requestInfo and frontCall (which keeps the caller's own request): the gateway, which
			// copies every header it is given into gRPC metadata, is given none but the type.
			r.Header = gatewayHeader
		} else {
			r.Header.Set("Content-Type", "application/json")
		}
		gw.ServeHTTP(w, r)
	})
}

// readBody reads a whole body into one buffer sized by Content-Length when the caller sent it
// (io.ReadAll would grow and copy a 16 MiB group body a dozen times).
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

// contentEncoded reports a body sent with a content coding (gzip, br, ...). The front reads a body
// as sent: a compressed one is not malformed JSON (400) but a coding it does not take, which
// RFC 9110 §15.5.16 answers with 415.
func contentEncoded(h http.Header) bool {
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return true
			}
		}
	}
	return false
}

// writeUnsupportedEncoding answers a content-encoded body: 415 with Accept-Encoding: identity
// (RFC 9110 §12.5.3: the codings a request may use).
func writeUnsupportedEncoding(w http.ResponseWriter) {
	w.Header().Set("Accept-Encoding", "identity")
	rpcerr.Write(w, rpcerr.HTTP{Status: http.StatusUnsupportedMediaType, Body: rpcerr.ErrorBody{
		Message: "Unsupported media type.", ExceptionType: rpcerr.ExceptionUnsupportedType,
		AdditionalInfo: "Send the body without Content-Encoding: it is read as sent.",
	}})
}
