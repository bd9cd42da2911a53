package rpcerr

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"
)

// The writer of the documented error body, and the HTTP-only answers no gRPC status stands for.

// Write writes e as the documented error body.
func Write(w http.ResponseWriter, e HTTP) {
	h := w.Header()
	h.Del("Grpc-Metadata-Content-Type")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(e.RetryAfter, 10))
	}
	if e.Status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		// RFC 6750 §3: a 401 names the scheme the caller should use.
		h.Set("WWW-Authenticate", cmp.Or(e.Challenge, bearerChallenge(nil)))
	}
	if e.Status == http.StatusMethodNotAllowed && h.Get("Allow") == "" {
		h.Set("Allow", http.MethodPost)
	}
	WriteJSON(w, e.Status, e.Body)
}

// WriteJSON writes v as JSON encodes it, the way of every body of the front but the gateway's.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(JSON(v))
}

// JSON is v compact, without HTML escaping ("<accessToken>" reads as written) or a final newline.
// v is the package's bodies or a login's answer, which cannot fail to encode.
func JSON(v any) []byte {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(body.Bytes(), []byte("\n"))
}

// Media types a path takes, as its 415 names them.
const (
	MediaNDJSON = "application/x-ndjson"
	// MediaLogin is what /authToken reads.
	MediaLogin = "application/json, application/x-www-form-urlencoded or multipart/form-data"
)

// UnsupportedMediaType is the 415 of a path that takes the media type(s) named, so that the
// caller learns what to send.
func UnsupportedMediaType(takes string) HTTP {
	return HTTP{Status: http.StatusUnsupportedMediaType, Body: ErrorBody{Message: "Unsupported media type.",
		ExceptionType: ExceptionUnsupportedType, AdditionalInfo: "Send Content-Type: " + takes + "."}}
}

// TooLarge is the 413 of a request body over limit bytes.
func TooLarge(limit int64) HTTP { return tooLarge("The request body", limit) }

// LineTooLarge is the 413 of a stream's line over limit bytes (its newline not counted).
func LineTooLarge(limit int64) HTTP { return tooLarge("The line", limit) }

func tooLarge(what string, limit int64) HTTP {
	return HTTP{Status: http.StatusRequestEntityTooLarge, Body: ErrorBody{Message: "Request too large.",
		ExceptionType: ExceptionTooLarge, AdditionalInfo: what + " exceeds the size limit of " + bytesText(limit) + "."}}
}

// bytesText is a limit in bytes, exactly, with its MiB or KiB when it is a whole number of them.
func bytesText(n int64) string {
	exact := strconv.FormatInt(n, 10) + " bytes"
	switch {
	case n > 0 && n%(1<<20) == 0:
		return exact + " (" + strconv.FormatInt(n>>20, 10) + " MiB)"
	case n > 0 && n%(1<<10) == 0:
		return exact + " (" + strconv.FormatInt(n>>10, 10) + " KiB)"
	}
	return exact
}

// WriteStatus writes the documented body of an HTTP-level error.
func WriteStatus(w http.ResponseWriter, code int) {
	Write(w, HTTP{Status: code, Body: BodyFor(code, nil)})
}
