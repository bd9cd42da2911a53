package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// apiFront is the JSON API: it enforces the media type and the body limit, normalises the bodies
// SPEC.md allows in more than one shape, then hands the request to the gateway.
func (s *Server) apiFront(gw http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimSuffix(r.URL.Path, "/") == "/authToken" { // its own handler: forms, Basic, OAuth 2.0 (authtoken.go)
			s.authToken(w, r)
			return
		}
		method, known := s.postRoutes[r.URL.Path]
		if r.Method != http.MethodPost || !known {
			gw.ServeHTTP(w, r) // the gateway answers 404 and 405 through routingErrorHandler
			return
		}
		// Credentials first: a caller without them learns nothing of the body's schema, and makes
		// us read no body. The gRPC interceptor checks again (a cached verification).
		if _, err := s.authorize(r.Context(), method, bearerFromHeader(r.Header.Values("Authorization"))); err != nil {
			writeHTTPError(w, fromStatus(err))
			return
		}
		form := false
		if ct := r.Header.Get("Content-Type"); ct != "" {
			mt, _, err := mime.ParseMediaType(ct)
			switch {
			case err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")):
			case err == nil && mt == "application/x-www-form-urlencoded":
				// curl -d labels every body form-encoded; a body that is JSON is taken as JSON.
				form = true
			default:
				writeHTTPStatus(w, http.StatusUnsupportedMediaType)
				return
			}
		}

		limit := s.cfg.Limits.MaxBodyBytes
		if strings.HasSuffix(r.URL.Path, "/group") {
			limit = s.cfg.Limits.MaxGroupBodyBytes
		}
		if r.ContentLength > limit {
			writeHTTPStatus(w, http.StatusRequestEntityTooLarge)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeHTTPStatus(w, http.StatusRequestEntityTooLarge)
				return
			}
			writeHTTPError(w, httpError{status: http.StatusBadRequest, body: bodyForHTTP(http.StatusBadRequest, errors.New("request body could not be read"))})
			return
		}

		if form && looksLikeJSON(body) {
			form = false
		}
		if form {
			writeHTTPStatus(w, http.StatusUnsupportedMediaType)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/group") {
			body, err = studentArraysToObjects(body)
		}
		if err != nil {
			writeHTTPError(w, fromStatus(err))
			return
		}
		if ri := requestInfoFrom(r.Context()); ri != nil {
			ri.body = body
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Type", "application/json")
		gw.ServeHTTP(w, r)
	})
}

// studentArraysToObjects rewrites studentData entries sent as [priorAbility, priorUncertainty,
// elapsedDays] into the object form of the contract. Bodies without array entries pass untouched.
func studentArraysToObjects(body []byte) ([]byte, error) {
	if !hasNestedArray(body) {
		return body, nil // a 100,000-student body of objects need not be parsed twice
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return body, nil // the gateway's decoder reports the malformed body
	}
	raw, ok := fields["studentData"]
	if !ok {
		return body, nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return body, nil
	}
	changed := false
	var problems Problems
	for i, e := range entries {
		e = bytes.TrimSpace(e)
		if len(e) == 0 || e[0] != '[' {
			continue
		}
		var nums []json.Number
		dec := json.NewDecoder(bytes.NewReader(e))
		dec.UseNumber()
		if err := dec.Decode(&nums); err != nil || len(nums) != 3 {
			problems.Add(indexed("studentData", i), "an array entry must hold exactly 3 numbers: priorAbility, priorUncertainty, elapsedDays")
			continue
		}
		entries[i] = []byte(`{"priorAbility":` + nums[0].String() + `,"priorUncertainty":` + nums[1].String() + `,"elapsedDays":` + nums[2].String() + `}`)
		changed = true
	}
	if err := problems.Err(); err != nil {
		return nil, err
	}
	if !changed {
		return body, nil
	}
	rewritten, err := json.Marshal(entries)
	if err != nil {
		return nil, Invalid("studentData", "could not be read: %v", err)
	}
	fields["studentData"] = rewritten
	return json.Marshal(fields)
}

func indexed(field string, i int) string {
	return field + "[" + strconv.Itoa(i) + "]"
}

// looksLikeJSON reports whether a body is a JSON object, whatever its Content-Type says.
func looksLikeJSON(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// hasNestedArray reports whether some '[' follows a '[' or a ',' (spaces aside): an array inside
// an array, the only shape an array entry of studentData can take. It may say yes for a string
// holding such text (the full parse then finds nothing to rewrite); it never says no wrongly.
func hasNestedArray(body []byte) bool {
	var prev byte
	for _, c := range body {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			if prev == '[' || prev == ',' {
				return true
			}
		}
		prev = c
	}
	return false
}
