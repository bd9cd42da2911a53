package serve

import (
	"encoding/json"
	"strconv"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// net/http answers a request whose header is over http.Server.MaxHeaderBytes itself, in plain
// text, before any handler runs. The connection that answer is written to is the drain
// listener's (drain.go), which puts the documented error body in its place: every non-2xx answer
// of the HTTP front is JSON. If a Go release words that answer differently, it goes out as Go
// wrote it (TestHeaderTooLargeIsJSON says so).

// plainTooLarge is net/http's answer, byte for byte (net/http/server.go, conn.serve).
const plainTooLarge = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large"

var jsonTooLarge = func() []byte {
	body, _ := json.Marshal(rpcerr.ErrorBody{ // a struct of strings: cannot fail
		Message: "Request header fields too large.", ExceptionType: rpcerr.ExceptionTooLarge,
		AdditionalInfo: "The request's header exceeds the size limit (64 KiB).",
	})
	return []byte("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n" +
		"X-Content-Type-Options: nosniff\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + string(body))
}()

// asJSON is the JSON answer to write in place of p when p is net/http's plain 431.
func asJSON(p []byte) (answer []byte, replaced bool) {
	if len(p) == len(plainTooLarge) && string(p) == plainTooLarge {
		return jsonTooLarge, true
	}
	return p, false
}
