package httpfront

import (
	"net/http"
	"strings"
	"sync"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/proto/yardstick"
)

// servedBy is, for every path of the contract (http.yaml), the service that serves it
// ("scoring", "forecast"; the token path is served by both and left out): a caller that sends a
// path to the wrong service is told where it belongs instead of only that it is unknown here.
var servedBy = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	routes, err := yardstick.Routes()
	if err != nil {
		return out // the frame refuses to start on a contract it cannot read; nothing to add here
	}
	for _, r := range routes {
		// "/yardstick.forecast.v1.ForecastService/Plan": the package's second part names it.
		parts := strings.Split(strings.TrimPrefix(r.FullMethod, "/"), ".")
		if len(parts) > 2 && parts[1] != "auth" {
			out[r.Path] = parts[1]
		}
	}
	return out
})

// notFound is the 404 of a path this service does not serve, naming the service that serves it
// when the contract has one.
func notFound(path string) rpcerr.HTTP {
	e := rpcerr.HTTP{Status: http.StatusNotFound, Body: rpcerr.BodyFor(http.StatusNotFound, nil)}
	if svc, ok := servedBy()[strings.TrimSuffix(path, "/")]; ok {
		e.Body.AdditionalInfo = "This path is served by the " + svc + " service, not this one: send it there, with a token of that service."
	}
	return e
}
