// Package inproc is the in-process door to the service's handlers: a grpc.ClientConnInterface
// whose every call runs the frame's chain and then the method's generated handler, as grpc-go's
// server would, without a network, a codec or a copy of the request. The JSON front and the
// batch records call their rpc through it with the ticket the gate admitted the call with (Call),
// and the chain refuses a call without one, as every call by Invoke (grpc-gateway's) is.
//
// Kept by hand rather than grpchan's inprocgrpc (docs/performance.md, "What was kept, and why"):
// that cost a JSON call 1.24-1.39 of this channel's CPU, hid a deep copy's heap from the budget,
// ran the handler past the caller's context and dropped the context values the token's claims
// travel in. Here the handler runs on the caller's goroutine and context, and the caller, the
// frame, never touches a request after handing it over.
//
// A service registers on the channel once (it is a grpc.ServiceRegistrar); the frame then
// registers what the channel holds on the gRPC server, so both doors serve the same handlers.
package inproc

import (
	"cmp"
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
)

// Chain is the chain every unary call runs once decoded, with the ticket the gate admitted it
// with (nil: none did; the chain refuses it), before the method's handler h.
type Chain func(ctx context.Context, t *gate.Ticket, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error)

// Channel is the in-process door: every service registers before the first call, then it is read-only.
type Channel struct {
	chain    Chain
	methods  map[string]method
	services []Service
}

// Service is a service registered on the channel, as grpc.ServiceRegistrar received it.
type Service struct {
	Desc *grpc.ServiceDesc
	Impl any
}

// method is what the generated handler hands the chain, taken once (capture).
type method struct {
	unary grpc.UnaryHandler
	info  *grpc.UnaryServerInfo
	req   proto.Message // the request it decodes into, to make more of (NewRequest); nil if not a proto
}

// New is a channel whose calls run through chain.
func New(chain Chain) *Channel {
	return &Channel{chain: chain, methods: map[string]method{}}
}

// RegisterService registers a service's unary methods; its streaming methods are served on the
// gRPC port only (Services hands them on).
func (c *Channel) RegisterService(desc *grpc.ServiceDesc, impl any) {
	for _, md := range desc.Methods {
		var m method
		if m.unary, m.info, m.req = capture(md.Handler, impl); m.unary == nil {
			// grpc.ServiceRegistrar's way to refuse a registration it cannot serve.
			panic(fmt.Sprintf("inproc: the handler of %s/%s does not hand its interceptor the call", desc.ServiceName, md.MethodName))
		}
		c.methods["/"+desc.ServiceName+"/"+md.MethodName] = m
	}
	c.services = append(c.services, Service{Desc: desc, Impl: impl})
}

// Services are the services registered, in their order, for the gRPC server.
func (c *Channel) Services() []Service { return c.services }

// ServiceInfo describes the services registered as grpc.Server's GetServiceInfo does.
func (c *Channel) ServiceInfo() map[string]grpc.ServiceInfo {
	info := map[string]grpc.ServiceInfo{}
	for _, s := range c.services {
		info[s.Desc.ServiceName] = Describe(s.Desc)
	}
	return info
}

// Describe is d as grpc.Server's GetServiceInfo describes a registered service.
func Describe(d *grpc.ServiceDesc) grpc.ServiceInfo {
	si := grpc.ServiceInfo{Metadata: d.Metadata}
	for _, m := range d.Methods {
		si.Methods = append(si.Methods, grpc.MethodInfo{Name: m.MethodName})
	}
	for _, m := range d.Streams {
		si.Methods = append(si.Methods, grpc.MethodInfo{Name: m.StreamName, IsClientStream: m.ClientStreams, IsServerStream: m.ServerStreams})
	}
	return si
}

// Call runs the unary method with req through the chain with ticket t; req and answer pass as they are.
func (c *Channel) Call(ctx context.Context, t *gate.Ticket, fullMethod string, req any) (any, error) {
	m, ok := c.methods[fullMethod]
	if !ok {
		return nil, unimplemented(fullMethod)
	}
	return c.chain(ctx, t, req, m.info, m.unary)
}

// NewRequest is a new, empty request of the unary method (a full method name), for a caller that
// decodes it itself and then calls Call: the generated handler's own message type.
func (c *Channel) NewRequest(fullMethod string) (proto.Message, error) {
	m, ok := c.methods[fullMethod]
	if !ok || m.req == nil {
		return nil, unimplemented(fullMethod)
	}
	return m.req.ProtoReflect().New().Interface(), nil
}

// capture runs a generated handler once with an interceptor that keeps what grpc.MethodHandler
// hands it (the call of the method, closing over impl alone, its info and the message it made)
// and calls nothing: a call then hands its own request to the chain, no closure or info made.
func capture(h grpc.MethodHandler, impl any) (unary grpc.UnaryHandler, info *grpc.UnaryServerInfo, req proto.Message) {
	noDecode := func(any) error { return nil }
	_, _ = h(impl, context.Background(), noDecode, func(_ context.Context, r any, i *grpc.UnaryServerInfo, u grpc.UnaryHandler) (any, error) {
		unary, info = u, i
		req, _ = r.(proto.Message)
		return nil, nil
	})
	return unary, info, req
}

// Invoke is grpc.ClientConnInterface's unary call, for grpc-gateway's registration: a call by it
// brings no ticket, which the chain refuses; no gate admitted it, so nothing is answered to it.
func (c *Channel) Invoke(ctx context.Context, fullMethod string, args, _ any, _ ...grpc.CallOption) error {
	_, err := c.Call(ctx, nil, fullMethod, args)
	return cmp.Or(err, status.Error(codes.Internal, fmt.Sprintf("inproc: the chain let %s through without a ticket", fullMethod)))
}

// NewStream is grpc.ClientConnInterface's stream: streams are served on the gRPC port only.
func (c *Channel) NewStream(_ context.Context, _ *grpc.StreamDesc, fullMethod string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, fmt.Sprintf("inproc: %s is a stream, served on the gRPC port only", fullMethod))
}

func unimplemented(fullMethod string) error {
	return status.Error(codes.Unimplemented, fmt.Sprintf("inproc: no unary method %s", fullMethod))
}
