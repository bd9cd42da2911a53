package serve

import (
	"context"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// Service is what a service brings to the frame.
type Service struct {
	// Register adds the service's gRPC implementations (the generated Register…Server) to the
	// registrar, once: the in-process channel (internal/inproc), which hands them to gRPC too.
	Register func(grpc.ServiceRegistrar)
	// Gateway registers the service's JSON routes (the generated Register…HandlerClient) on conn,
	// the in-process channel, so that a JSON call runs the same chain and handler as a gRPC call.
	Gateway func(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error
	// Reload re-reads the service's own files (its content bundle) and reports whether they
	// changed; nil if it has none. An error keeps the last good version serving and is logged.
	Reload func() (changed bool, err error)
	// Wire are the JSON rules of the service's messages beyond protojson's; none when empty.
	Wire WireRules
	// Methods are the limits the service sets on particular rpcs of its own, by full method (the
	// generated …_FullMethodName), in place of YARDSTICK_MAX_BODY_BYTES, which bounds every other.
	Methods map[string]MethodLimits
	// Version names the content served (a hash of its files) in yardstick_reload_info; nil: none.
	Version func() string

	// BatchPath is the service's NDJSON batch stream (streams.go), "" for none; it takes BatchRPC's
	// permission (and each record its own path's).
	BatchPath string
	// GroupStreams are the service's group forecast streams by path, with the permissions of the
	// group stream rpc (BatchRPC's service's other stream).
	GroupStreams map[string]OpenGroup
	// BatchRPC is the full method of the service's gRPC batch stream ("" for none), which the frame
	// serves in its place (grpcbatch.go): each record runs as a unary call of the rpc it names.
	BatchRPC string
}

// MethodLimits are the limits of one rpc of a service: its JSON body and gRPC message, and for a
// group call its most entries and its cost model, by which the memory budget costs it.
type MethodLimits = routes.Method

// GroupCost is a group call's cost model (MethodLimits.Cost), measured by its service.
type GroupCost = admission.GroupCost

// FrontCost is a group call's heap on one front (GroupCost.JSON, GroupCost.Proto).
type FrontCost = admission.FrontCost

// ClaimsFrom returns the verified token claims of the request, for handlers that need the client.
func ClaimsFrom(ctx context.Context) (token.Claims, bool) { return authz.ClaimsFrom(ctx) }
