package authz

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// loginRequest is a /authToken request, whatever its shape.
type loginRequest struct {
	clientID, secret string
	oauth            bool // grant_type given (RFC 6749 §4.4): answered in OAuth 2.0's shape
	grant, scope     string
	basic            bool  // the credentials came in an HTTP Basic Authorization header
	basicErr         error // the 401 of a Basic header that could not be read
}

// requestError is a /authToken request that cannot be read: its answer in the original API's
// shape (a 400 naming the field, 413 or 415), and for a 400 OAuth 2.0's error_description.
type requestError struct {
	answer rpcerr.HTTP
	msg    string
}

var (
	errTooLarge    = &requestError{answer: rpcerr.TooLarge(routes.AuthTokenBodyLimit)}
	errUnsupported = &requestError{answer: rpcerr.UnsupportedMediaType(rpcerr.MediaLogin)}
)

// badRequest is a 400 of field ("": the request as a whole).
func badRequest(field, format string, args ...any) *requestError {
	msg := fmt.Sprintf(format, args...)
	return &requestError{msg: msg, answer: rpcerr.HTTP{Status: http.StatusBadRequest, Body: rpcerr.ErrorBody{
		Message: rpcerr.MsgInvalid, ExceptionType: rpcerr.ExceptionValidation, AdditionalInfo: rpcerr.InfoValidation,
		ValidationErrors: map[string][]string{cmp.Or(field, rpcerr.NonFieldErrors): {msg}},
	}}}
}

// canonical maps each name a /authToken body may use to its parameter: the original API's names
// (clientID is its parameter table's spelling) and OAuth 2.0's (RFC 6749 §4.4 and §2.3.1).
var canonical = map[string]string{
	"clientId": "clientId", "clientID": "clientId", "client_id": "clientId",
	"clientSecret": "clientSecret", "client_secret": "clientSecret",
	"grant_type": "grant_type",
	"scope":      "scope",
}

func readLoginRequest(w http.ResponseWriter, r *http.Request) (loginRequest, *requestError) {
	values, rerr := readLoginBody(w, r)
	if rerr != nil {
		return loginRequest{}, rerr
	}
	// Decided first, so that even a malformed OAuth request is answered in OAuth's shape.
	req := loginRequest{oauth: values.Get("grant_type") != ""}
	params, rerr := loginParams(values, req.oauth)
	if rerr != nil {
		return req, rerr
	}
	req.clientID, req.secret, req.grant, req.scope = params["clientId"], params["clientSecret"], params["grant_type"], params["scope"]
	rerr = req.takeBasic(r.Header.Values("Authorization")) // before req is returned: it sets the credentials
	return req, rerr
}

// loginParams maps the body's values to their parameters under either naming: an OAuth 2.0
// request ignores unknown names, any other refuses them, as it does a name given twice.
func loginParams(values url.Values, oauth bool) (map[string]string, *requestError) {
	params := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		v := values[name]
		param, known := canonical[name]
		switch {
		case !known && oauth:
			continue // RFC 6749 §3.2: unrecognized parameters are ignored
		case !known:
			// As on the JSON front: a misspelt name is named rather than answered 401 "missing".
			return nil, badRequest(name, "unknown field %q%s", name, suggest(name))
		case len(v) > 1:
			return nil, badRequest(param, "%s is given more than once", name)
		case v[0] == "":
			continue // RFC 6749 §3.2: a parameter without a value is omitted
		}
		if _, dup := params[param]; dup {
			return nil, badRequest(param, "%s is given twice (under two names)", param)
		}
		params[param] = v[0]
	}
	return params, nil
}

// takeBasic takes the credentials of an HTTP Basic Authorization header, if any: unreadable ones
// are no credentials (401), and credentials in both the header and the body are refused.
func (req *loginRequest) takeBasic(authorization []string) *requestError {
	id, secret, basic, err := basicCredentials(authorization)
	switch {
	case err != nil:
		req.clientID, req.secret, req.basic = "", "", true
		req.basicErr = rpcerr.NotAuthenticated("Authentication failed.", "The Basic credentials could not be read: "+err.Error()+".")
	case !basic:
	case req.clientID != "" || req.secret != "":
		return badRequest("", "credentials are given both in the Authorization header and in the body; use one")
	default:
		req.clientID, req.secret, req.basic = id, secret, true
	}
	return nil
}

// readLoginBody reads the body and decodes it by its media type, sniffed when absent; a
// form-encoded body that is a JSON object is read as JSON (curl -d labels everything so).
func readLoginBody(w http.ResponseWriter, r *http.Request) (url.Values, *requestError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, routes.AuthTokenBodyLimit))
	switch {
	case errors.As(err, new(*http.MaxBytesError)):
		return nil, errTooLarge
	case err != nil:
		return nil, badRequest("", "request body could not be read")
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	switch {
	case ct != "" && err != nil:
		return nil, errUnsupported // answered as any other type it does not take
	case mt == "multipart/form-data":
		return parseMultipart(body, params["boundary"])
	case (mt == "" || mt == "application/x-www-form-urlencoded") && !jsonwire.IsObject(body):
		v, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, badRequest("", "form body could not be parsed")
		}
		return v, nil
	case mt == "" || mt == "application/x-www-form-urlencoded" || mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return parseLoginJSON(body)
	}
	return nil, errUnsupported
}

// parseLoginJSON reads a JSON object of string fields: duplicate keys, trailing data and values
// that are not strings are errors; null is an omitted field.
func parseLoginJSON(body []byte) (url.Values, *requestError) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, badRequest("", "request body must be a JSON object")
	}
	values := url.Values{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, badRequest("", "request body is not valid JSON")
		}
		name := tok.(string) // inside an object, a key is always a string
		if _, dup := values[name]; dup {
			return nil, badRequest(name, "duplicate key %q", name)
		}
		v, err := dec.Token()
		switch v := v.(type) {
		case string:
			values[name] = []string{v}
		case nil:
			if err != nil {
				return nil, badRequest("", "request body is not valid JSON")
			}
			values[name] = []string{""}
		default:
			return nil, badRequest(name, "%s must be a string", name)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, badRequest("", "request body is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("", "request body has data after the JSON object")
	}
	return values, nil
}

// parseMultipart reads a multipart/form-data body's fields; a file part's content is its value.
func parseMultipart(body []byte, boundary string) (url.Values, *requestError) {
	if boundary == "" {
		return nil, badRequest("", "multipart body could not be parsed: no boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	values := url.Values{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return values, nil
		}
		var data []byte
		if err == nil {
			data, err = io.ReadAll(p)
		}
		if err != nil {
			return nil, badRequest("", "multipart body could not be parsed: malformed part")
		}
		if name := p.FormName(); name != "" {
			values[name] = append(values[name], string(data))
		}
	}
}

// basicCredentials reads HTTP Basic credentials, form-urlencoded (RFC 6749 §2.3.1): ok false when
// there is no Basic header (a Bearer one is ignored), err for one that cannot be read.
func basicCredentials(values []string) (id, secret string, ok bool, err error) {
	enc, ok := authParam(values, "basic")
	if !ok {
		return "", "", false, nil
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", "", true, errors.New("basic credentials are not base64")
	}
	rawID, rawSecret, found := strings.Cut(string(raw), ":")
	if !found {
		return "", "", true, errors.New("basic credentials lack ':'")
	}
	if id, err = url.QueryUnescape(rawID); err != nil {
		return "", "", true, errors.New("basic client id is not form-urlencoded")
	}
	if secret, err = url.QueryUnescape(rawSecret); err != nil {
		return "", "", true, errors.New("basic client secret is not form-urlencoded")
	}
	return id, secret, true, nil
}

// suggest names the accepted field closest to an unknown one (case, '_' and two edits aside).
func suggest(name string) string {
	fold := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	for _, param := range []string{"clientId", "clientSecret", "grant_type", "scope"} {
		if jsoncodec.Distance(fold(name), fold(param)) <= 2 {
			return fmt.Sprintf("; did you mean %q?", param)
		}
	}
	return "; the fields are clientId and clientSecret"
}
