package httpfront

import (
	"net/http"
	"strings"
)

// continueIfExpected sends 100 Continue to a caller that asked for it (Expect: 100-continue,
// RFC 9110 §10.1.1) before a stream's 200 head. net/http sends it on the body's first read, but
// a stream answers its head before it reads: without this the caller, curl among them, waits out
// its own timer (a second) before it sends the body. Refusals (401, 403, 415, 503) come before
// and need none: the caller then sends no body at all.
func continueIfExpected(w http.ResponseWriter, r *http.Request) {
	if !r.ProtoAtLeast(1, 1) || r.ContentLength == 0 {
		return
	}
	for _, v := range r.Header.Values("Expect") {
		for token := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(token), "100-continue") {
				w.WriteHeader(http.StatusContinue)
				return
			}
		}
	}
}
