package httpfront

import (
	"net/http"
	"strings"
)

// continueIfExpected sends 100 Continue (RFC 9110 §10.1.1) to a caller that asked for it, before a
// stream's 200 head: net/http sends it on the body's first read, which comes after the head, and
// the caller (curl among them) would wait out its own timer, a second, before sending the body.
// Refusals come before and need none: the caller then sends no body at all.
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
