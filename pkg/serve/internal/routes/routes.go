// Package routes is the route table: every rpc the server serves, with all that each layer needs
// of it (JSON path, access rule, limits, a group call's cost model), read once from the contract
// and the service's limits, and the shape of a gRPC batch rpc's messages (batchshape.go). No layer
// keeps a rule of its own.
package routes

import (
	"cmp"
	"fmt"
	"net/http"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/proto/yardstick"
)

// Route is one rpc the server serves.
type Route struct {
	Method       string // the gRPC full method
	Path         string // its JSON path; "" for an rpc without one (health, reflection)
	Rule         Rule   // who may call it
	Ruled        bool   // the contract gives it a rule; without one it is refused (fail closed)
	Records      bool   // a gRPC batch stream: admitted once, ended by the batch idle limit, not the read timeout
	Record       bool   // a unary rpc a batch record may name (method option yardstick.batch.v1.record)
	Stream       Stream // an NDJSON stream (served by internal/batch); 0 for a unary route
	BodyLimit    int64  // the largest JSON body
	MessageLimit int64  // the largest gRPC message

	Group *admission.Group // a group call's cost model and most entries (Method), by which it is costed; nil else
}

// Table is the server's routes by method and by JSON path. It is built once and only read after.
type Table struct {
	ByMethod map[string]*Route
	ByPath   map[string]*Route // POST paths of the JSON front
	labels   map[string]bool   // every HTTP path the front serves: the metric labels
	Ceiling  int64             // the server-wide receive limit: the largest message limit
}

// Stream is the kind of a JSON front's streaming route: no rpc, NDJSON, records bounded one by one.
type Stream int

const (
	Unary       Stream = iota // every route of the contract: one JSON body, one answer
	Batch                     // the NDJSON batch: each record runs as a unary call of its path
	GroupStream               // a group call's stream (serve.Service.GroupStreams): its entries one a line
)

// AddStream adds a streaming route at path, open to tokens with rule's permissions.
func (t *Table) AddStream(path string, kind Stream, rule Rule) {
	t.ByPath[path] = &Route{Method: path, Path: path, Rule: rule, Ruled: true, Stream: kind}
	t.labels[path] = true
}

// Method are the limits a service sets on one of its rpcs in place of the frame's body limit, and
// a group call's cost model.
type Method struct {
	BodyLimit    int64               // its largest JSON body, on each of its paths; 0: the frame's
	MessageLimit int64               // its largest gRPC message; 0: its body limit
	Entries      int                 // above 0: a group call (Route.Group), costed by up to this many entries
	Cost         admission.GroupCost // a group call's cost model (required with Entries), measured by the service
}

// group is the route's group call of own, nil when own has no entries; a model without entries,
// or entries without a whole model, is refused rather than costed as nothing.
func group(full string, own Method) (*admission.Group, error) {
	if own.Entries <= 0 && own.Cost != (admission.GroupCost{}) {
		return nil, fmt.Errorf("rpc %s: a cost model without Entries", full)
	} else if own.Entries <= 0 {
		return nil, nil
	} else if err := own.Cost.Check(); err != nil {
		return nil, fmt.Errorf("rpc %s, a group call of %d entries: %w", full, own.Entries, err)
	}
	return &admission.Group{Cost: own.Cost, Entries: int64(own.Entries)}, nil
}

// AuthTokenBodyLimit bounds a /authToken body: credentials are small, and the caller unknown yet.
const AuthTokenBodyLimit = 64 << 10

var operationalPaths = []string{"/healthz", "/readyz", "/metrics", "/openapi.json", "/.well-known/jwks.json"}

// Build builds the table of the methods in info, the services registered on a server: every JSON
// body and gRPC message bounded by maxBody but those of the methods a service bounds (by full method).
func Build(info map[string]grpc.ServiceInfo, maxBody int64, methods map[string]Method) (*Table, error) {
	file, err := yardstick.Routes()
	if err != nil {
		return nil, err
	}
	t := &Table{ByMethod: map[string]*Route{}, ByPath: map[string]*Route{}, labels: map[string]bool{}}
	for _, p := range operationalPaths {
		t.labels[p] = true
	}
	for svcName, si := range info {
		var sd protoreflect.ServiceDescriptor
		if !publicServices[svcName] {
			if sd, err = serviceDescriptor(svcName); err != nil {
				return nil, err
			}
		}
		for _, m := range si.Methods {
			full := "/" + svcName + "/" + m.Name
			own := methods[full]
			g, err := group(full, own)
			if err != nil {
				return nil, err
			}
			r := &Route{Method: full, Rule: Rule{Public: true}, Ruled: true, Group: g,
				BodyLimit: cmp.Or(own.BodyLimit, maxBody), MessageLimit: cmp.Or(own.MessageLimit, own.BodyLimit, maxBody)}
			if sd != nil { // a service of ours; an infrastructure service's methods are open to all
				md := sd.Methods().ByName(protoreflect.Name(m.Name))
				r.Rule, r.Ruled = options(md)
				r.Record, r.Records = recordable(md), m.IsClientStream && m.IsServerStream && r.Ruled && !r.Rule.Public
			}
			t.ByMethod[full] = r
		}
		for _, c := range httpRules(sd, file) {
			if r := t.ByMethod[c.FullMethod]; r != nil && c.Method == http.MethodPost {
				t.bind(r, c.Path, methods[r.Method], maxBody)
			}
		}
	}
	t.Ceiling = maxBody
	for _, r := range t.ByMethod {
		t.Ceiling = max(t.Ceiling, r.MessageLimit)
	}
	return t, nil
}

// bind gives r the JSON path path: an rpc of several paths takes the largest body.
func (t *Table) bind(r *Route, path string, own Method, maxBody int64) {
	limit := cmp.Or(own.BodyLimit, maxBody)
	if path == "/authToken" {
		limit = AuthTokenBodyLimit
	}
	if r.Path == "" || limit > r.BodyLimit {
		r.BodyLimit = limit
	}
	r.Path = path
	r.MessageLimit = cmp.Or(own.MessageLimit, r.BodyLimit)
	if r.Ruled {
		t.ByPath[path], t.labels[path] = r, true
	}
}

// Label bounds the metric label set: a known path is itself, anything else "other" (a scanner
// walking random paths must not create a series per path).
func (t *Table) Label(path string) string {
	if t.labels[path] {
		return path
	}
	return "other"
}

// httpRules are the HTTP rules of sd's rpcs in grpc-gateway's generator's order: each method's
// google.api.http POST binding (the front serves POST alone), then the routes file's rules.
func httpRules(sd protoreflect.ServiceDescriptor, file []yardstick.Route) []yardstick.Route {
	if sd == nil {
		return nil
	}
	var rules []yardstick.Route
	for i := range sd.Methods().Len() {
		md := sd.Methods().Get(i)
		full := "/" + string(sd.FullName()) + "/" + string(md.Name())
		if rule, ok := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule); ok && rule.GetPost() != "" {
			rules = append(rules, yardstick.Route{Method: http.MethodPost, Path: rule.GetPost(), FullMethod: full})
		}
		for _, r := range file {
			if r.FullMethod == full {
				rules = append(rules, r)
			}
		}
	}
	return rules
}

func serviceDescriptor(name string) (protoreflect.ServiceDescriptor, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("descriptor of service %s: %w", name, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a service", name)
	}
	return sd, nil
}
