package serve

// The route table: every rpc the server serves, with all that each layer needs of it, read once
// in New from the contract (the routes file and the methods' options) and the configured limits.
// The JSON front finds a request's route by path, the gRPC door by method, each once per call; no
// layer keeps a rule of its own.

import (
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/proto/yardstick"
)

// route is one rpc the server serves.
type route struct {
	method       string     // the gRPC full method
	path         string     // its JSON path; "" for an rpc without one (health, reflection)
	rule         accessRule // who may call it
	ruled        bool       // the contract gives it a rule; without one it is refused (fail closed)
	clientStream bool       // the client sends a stream of messages (reflection)
	group        bool       // a group forecast: costed per student, its own body limits
	bodyLimit    int64      // the largest JSON body
	messageLimit int64      // the largest gRPC message
}

// routeTable is the server's routes by method and by JSON path.
type routeTable struct {
	byMethod map[string]*route
	byPath   map[string]*route // POST paths of the JSON front
	labels   map[string]bool   // every HTTP path the front serves: the metric labels
	ceiling  int64             // the server-wide receive limit: the largest message limit
}

// operational paths of the HTTP front, beside the API's.
var operationalPaths = []string{"/healthz", "/readyz", "/metrics", "/openapi.json", "/.well-known/jwks.json"}

// isGroupRoute reports whether path is a group forecast's: the one place this rule is written.
func isGroupRoute(path string) bool { return strings.HasSuffix(path, "/group") }

// bodyLimit is the largest JSON body path takes.
func bodyLimit(path string, l Limits) int64 {
	switch {
	case path == "/authToken":
		return maxAuthBodyBytes
	case isGroupRoute(path):
		return l.MaxGroupBodyBytes
	default:
		return l.MaxBodyBytes
	}
}

// buildRoutes builds the table of the methods in info, the services registered on a server.
func buildRoutes(info map[string]grpc.ServiceInfo, l Limits) (*routeTable, error) {
	contract, err := yardstick.Routes()
	if err != nil {
		return nil, err
	}
	rules, err := accessRules(info)
	if err != nil {
		return nil, fmt.Errorf("access rules: %w", err)
	}
	t := &routeTable{byMethod: map[string]*route{}, byPath: map[string]*route{}, labels: map[string]bool{}}
	for _, p := range operationalPaths {
		t.labels[p] = true
	}
	for svcName, si := range info {
		for _, m := range si.Methods {
			full := "/" + svcName + "/" + m.Name
			rule, ruled := rules[full]
			t.byMethod[full] = &route{method: full, rule: rule, ruled: ruled, clientStream: m.IsClientStream,
				bodyLimit: l.MaxBodyBytes, messageLimit: l.MaxBodyBytes}
		}
	}
	for _, c := range contract {
		r := t.byMethod[c.FullMethod]
		if r == nil || c.Method != http.MethodPost {
			continue
		}
		limit := bodyLimit(c.Path, l)
		if r.path == "" || limit > r.bodyLimit { // an rpc of several paths takes the largest body
			r.bodyLimit = limit
		}
		r.path, r.group = c.Path, r.group || isGroupRoute(c.Path)
		r.messageLimit = r.bodyLimit
		if r.group {
			r.messageLimit = grpcGroupLimit(l)
		}
		if r.ruled {
			t.byPath[c.Path], t.labels[c.Path] = r, true
		}
	}
	t.ceiling = l.MaxBodyBytes
	for _, r := range t.byMethod {
		t.ceiling = max(t.ceiling, r.messageLimit)
	}
	return t, nil
}

// label bounds the metric label set: a known path is itself, anything else "other" (a scanner
// walking random paths must not create a series per path).
func (t *routeTable) label(path string) string {
	if t.labels[path] {
		return path
	}
	return "other"
}
