package serve

import (
	"fmt"
	"path"

	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/httpfront"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// The NDJSON streams (docs/api.md, "Batches"): a service names its batch path and group streams
// in Service; the frame routes them, admits them (internal/httpfront) and runs the engine
// (internal/batch). A batch record runs as a unary call of its own path on this front.

// GroupStream is one group call in progress on a group stream: the service validates, works on
// and encodes each entry line, then the group's aggregate (internal/batch's GroupStream).
type GroupStream = batch.GroupStream

// OpenGroup validates a group stream's settings line and starts the group; its error is the
// answer to the whole request.
type OpenGroup = batch.OpenGroup

// addStreams adds the service's stream routes to the route table, each with the access rule of
// its gRPC form in the contract: the batch path its batch rpc's (BatchRPC), a group stream that
// of the one other stream with a rule of BatchRPC's service (the gRPC group stream).
func (s *Server) addStreams(svc Service) error {
	var batchRule, groupRule *routes.Rule
	groups := 0
	for _, r := range s.routes.ByMethod {
		switch {
		case !r.Records || path.Dir(r.Method) != path.Dir(svc.BatchRPC): // not a stream of its service
		case r.Method == svc.BatchRPC:
			batchRule = &r.Rule
		default:
			groupRule, groups = &r.Rule, groups+1
		}
	}
	if (svc.BatchPath != "" && batchRule == nil) || (len(svc.GroupStreams) > 0 && groups != 1) {
		return fmt.Errorf("streams: the batch path takes the rule of BatchRPC %q, a group stream that of its service's one other stream rpc: not among the rpcs served", svc.BatchRPC)
	}
	if svc.BatchPath != "" {
		s.routes.AddStream(svc.BatchPath, routes.Batch, *batchRule)
	}
	for p := range svc.GroupStreams {
		s.routes.AddStream(p, routes.GroupStream, *groupRule)
	}
	return nil
}

// Wire is the JSON front's codec, for a handler that decodes and encodes messages itself (a
// group stream's lines): errors and answers exactly as the front's.
type Wire struct{ c *jsonwire.Codec }

// NewWire is the codec of a service's wire rules r (the Service.Wire the frame serves it with):
// the front's, its lists cut off past their limits as the front's.
func NewWire(r WireRules) Wire { return Wire{c: newWireCodec(r)} }

// UnmarshalFields decodes data into m as the front decodes a body, for a handler that answers
// every problem of a body at once: when the problems are each a field's, m holds every other field
// as sent and they come back as fieldErr, err nil, for WithFieldProblems(fieldErr, the handler's
// own error). Any other problem (not JSON, not one object) is err, the 400 a body with the same
// problems gets (rpcerr's validation error).
func (w Wire) UnmarshalFields(data []byte, m proto.Message) (fieldErr, err error) {
	err = w.c.Unmarshal(data, m)
	switch {
	case err == nil:
		return nil, nil
	case httpfront.FieldsOnly(err):
		return err, nil
	default:
		return nil, httpfront.DecodeProblems(err)
	}
}

// WithFieldProblems is the 400 of a body whose decoding found fieldErr (UnmarshalFields) and
// whose checks answered err: every problem of both, as the front answers a unary call's.
func WithFieldProblems(fieldErr, err error) error { return httpfront.WithFieldProblems(fieldErr, err) }

// Marshal encodes m as the front encodes an answer.
func (w Wire) Marshal(m proto.Message) ([]byte, error) { return w.c.Marshal(nil, m) }
