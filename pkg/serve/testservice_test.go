package serve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// The frame's own test service, which its tests serve instead of a real service's rpcs: declared
// the way a new .proto file of the scoring service's contract (yardstick/scoring/v1/) declares
// one — its rpcs, their permissions, that a batch record may name one, their HTTP rules — with
// the handlers and the registrations the generators would write. Nothing of the frame or of
// pkg/token knows it: the clients file grants its permissions because the contract declares
// them, and its package makes them scoring's. TestThrowawayEndpoint shows that this is all a new
// rpc takes.
const (
	throwawayService   = "yardstick.scoring.v1.EchoService"
	throwawayMethod    = "/" + throwawayService + "/Echo"
	throwawayShout     = "/" + throwawayService + "/Shout"
	throwawayBatch     = "/" + throwawayService + "/EchoBatch"
	throwawayGroup     = "/" + throwawayService + "/Group"
	throwawayPath      = "/api/throwaway/echo"
	throwawayShoutPath = "/api/throwaway/shout"
	throwawayBatchPath = "/api/throwaway/batch"
	throwawayGroupPath = "/api/throwaway/group"
	throwawayPerm      = "throwaway:echo"
	throwawayShoutPerm = "throwaway:shout"
	throwawayBatchPerm = "throwaway:batch"
)

var (
	throwawayOnce sync.Once
	echoIn        protoreflect.MessageDescriptor // EchoRequest {text, items: [{id, result}]}
	echoOut       protoreflect.MessageDescriptor // EchoResponse {text, client}
	echoRecord    protoreflect.MessageDescriptor
	echoAnswer    protoreflect.MessageDescriptor
)

// field is a field of a descriptor under construction: typ is a message's full name (leading
// dot), or "" for a string; oneof the index of its oneof, nil for none.
func field(name string, num int32, typ string, oneof *int32) *descriptorpb.FieldDescriptorProto {
	f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), OneofIndex: oneof,
		Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(typ)}
	if typ == "" {
		f.Type, f.TypeName = descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), nil
	}
	return f
}

// rpcOptions are an rpc's options: its permission, its HTTP rule (path "" for none) and whether
// a batch record may name it.
func rpcOptions(perm, path string, record bool) *descriptorpb.MethodOptions {
	opts := &descriptorpb.MethodOptions{}
	proto.SetExtension(opts, authv1.E_Permission, perm)
	if record {
		proto.SetExtension(opts, batchv1.E_Record, true)
	}
	if path != "" {
		proto.SetExtension(opts, annotations.E_Http, &annotations.HttpRule{Pattern: &annotations.HttpRule_Post{Post: path}, Body: "*"})
	}
	return opts
}

// throwawayFile is the contract file, as protoc would describe it.
func throwawayFile() *descriptorpb.FileDescriptorProto {
	const pkg = ".yardstick.scoring.v1."
	item := &descriptorpb.DescriptorProto{Name: proto.String("EchoItem"), Field: []*descriptorpb.FieldDescriptorProto{
		field("id", 1, "", nil), field("result", 2, "", nil)}}
	item.Field[1].Type = descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum()
	in := &descriptorpb.DescriptorProto{Name: proto.String("EchoRequest"), Field: []*descriptorpb.FieldDescriptorProto{
		field("text", 1, "", nil), field("items", 2, pkg+"EchoItem", nil)}}
	in.Field[1].Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	out := &descriptorpb.DescriptorProto{Name: proto.String("EchoResponse"), Field: []*descriptorpb.FieldDescriptorProto{
		field("text", 1, "", nil), field("client", 2, "", nil)}}
	// The batch rpc's record and answer, as the contract's batch rpcs have them:
	// {id, oneof request {a field named for each rpc}}, {id, oneof answer {responses, error}}.
	record := &descriptorpb.DescriptorProto{Name: proto.String("EchoBatchRecord"), OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("request")}},
		Field: []*descriptorpb.FieldDescriptorProto{field("id", 1, "", nil), field("echo", 2, pkg+"EchoRequest", proto.Int32(0)), field("shout", 3, pkg+"EchoRequest", proto.Int32(0))}}
	answer := &descriptorpb.DescriptorProto{Name: proto.String("EchoBatchAnswer"), OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("answer")}},
		Field: []*descriptorpb.FieldDescriptorProto{field("id", 1, "", nil), field("echo_response", 2, pkg+"EchoResponse", proto.Int32(0)),
			field("error", 3, ".yardstick.batch.v1.Status", proto.Int32(0))}}
	return &descriptorpb.FileDescriptorProto{
		Name: proto.String("yardstick/scoring/v1/echo.proto"), Package: proto.String("yardstick.scoring.v1"), Syntax: proto.String("proto3"),
		Dependency:  []string{"yardstick/auth/v1/auth.proto", "yardstick/batch/v1/batch.proto", "google/api/annotations.proto"},
		MessageType: []*descriptorpb.DescriptorProto{item, in, out, record, answer},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("EchoService"), Method: []*descriptorpb.MethodDescriptorProto{{
			Name: proto.String("Echo"), InputType: proto.String(pkg + "EchoRequest"), OutputType: proto.String(pkg + "EchoResponse"),
			Options: rpcOptions(throwawayPerm, throwawayPath, true),
		}, {
			Name: proto.String("Shout"), InputType: proto.String(pkg + "EchoRequest"), OutputType: proto.String(pkg + "EchoResponse"),
			Options: rpcOptions(throwawayShoutPerm, throwawayShoutPath, true),
		}, {
			// Group is Echo with the limits of a group call (the service's Methods: its cost
			// estimate, its body limits): for the group admission tests, which alone serve it
			// (startTestGroup).
			Name: proto.String("Group"), InputType: proto.String(pkg + "EchoRequest"), OutputType: proto.String(pkg + "EchoResponse"),
			Options: rpcOptions(throwawayPerm, throwawayGroupPath, false),
		}, {
			Name: proto.String("EchoBatch"), InputType: proto.String(pkg + "EchoBatchRecord"), OutputType: proto.String(pkg + "EchoBatchAnswer"),
			ClientStreaming: proto.Bool(true), ServerStreaming: proto.Bool(true), Options: rpcOptions(throwawayBatchPerm, "", false),
		}}}},
	}
}

// registerThrowaway adds the test contract to the registries, as a generated file's init does.
func registerThrowaway(t testing.TB) {
	t.Helper()
	throwawayOnce.Do(func() {
		fd, err := protodesc.NewFile(throwawayFile(), protoregistry.GlobalFiles)
		if err != nil {
			panic(err)
		}
		if err := protoregistry.GlobalFiles.RegisterFile(fd); err != nil {
			panic(err)
		}
		echoIn, echoOut = fd.Messages().ByName("EchoRequest"), fd.Messages().ByName("EchoResponse")
		echoRecord, echoAnswer = fd.Messages().ByName("EchoBatchRecord"), fd.Messages().ByName("EchoBatchAnswer")
		for i := range fd.Messages().Len() {
			if err := protoregistry.GlobalTypes.RegisterMessage(dynamicpb.NewMessageType(fd.Messages().Get(i))); err != nil {
				panic(err)
			}
		}
	})
}

// echoServer is the test service's handlers. Echo (and Shout and Group, the same handler) answers
// the request's text upper-cased, and the client the token names; the text picks what else it
// does:
//
//	"panic"     panics with "secret internal detail"
//	"slow"      signals started, then waits for release
//	"slow:T"    signals started, waits for release (or the call's end), then does what T asks
//	"invalid"   fails validation with a problem of items[0].result, one of framework and a
//	            request-wide one
//	"fault"     fails with an unexpected error ("database password is hunter2")
//	"metadata"  answers the metadata keys the call carried, sorted and joined by commas
//	""          fails with InvalidArgument "text is required"
type echoServer struct {
	release chan struct{} // "slow" waits for it
	started chan struct{} // "slow" signals it has begun
	calls   atomic.Int64  // Echo, Shout and Group calls begun
	group   bool          // serves Group (startTestGroup)
	limits  fakeLimits    // its items' limit, and Group's as a group forecast's
}

func newEchoServer() *echoServer {
	return &echoServer{release: make(chan struct{}), started: make(chan struct{}, 1), limits: fakeDefaults}
}

func (e *echoServer) echo(ctx context.Context, in *dynamicpb.Message) (*dynamicpb.Message, error) {
	e.calls.Add(1)
	text := in.Get(echoIn.Fields().ByName("text")).String()
	if then, held := strings.CutPrefix(text, "slow:"); held { // a call that holds the budget, then ends as asked
		e.started <- struct{}{}
		select {
		case <-e.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		text = then
	}
	switch text {
	case "":
		return nil, status.Error(codes.InvalidArgument, "text is required")
	case "panic":
		panic("secret internal detail")
	case "slow":
		e.started <- struct{}{}
		<-e.release
	case "invalid":
		var p rpcerr.Problems
		p.Add("items[0].result", "must be 0 or 1, got %d", 7)
		p.Add("framework", "is required")
		p.Add("", "request-wide problem")
		return nil, p.Err()
	case "fault":
		return nil, errors.New("database password is hunter2")
	case "metadata":
		md, _ := metadata.FromIncomingContext(ctx)
		text = strings.Join(slices.Sorted(maps.Keys(md)), ",")
		return echoAnswerOf(text, ""), nil
	}
	client, _ := ClaimsFrom(ctx)
	return echoAnswerOf(strings.ToUpper(text), client.ClientID), nil
}

// echoAnswerOf is an EchoResponse.
func echoAnswerOf(text, client string) *dynamicpb.Message {
	out := dynamicpb.NewMessage(echoOut)
	if text != "" {
		out.Set(echoOut.Fields().ByName("text"), protoreflect.ValueOfString(text))
	}
	if client != "" {
		out.Set(echoOut.Fields().ByName("client"), protoreflect.ValueOfString(client))
	}
	return out
}

// echoRequest is an EchoRequest of text and items (id, result pairs).
func echoRequest(text string, items ...any) *dynamicpb.Message {
	in := dynamicpb.NewMessage(echoIn)
	if text != "" {
		in.Set(echoIn.Fields().ByName("text"), protoreflect.ValueOfString(text))
	}
	list := in.Mutable(echoIn.Fields().ByName("items")).List()
	item := echoIn.Fields().ByName("items").Message()
	for i := 0; i+1 < len(items); i += 2 {
		m := dynamicpb.NewMessage(item)
		m.Set(item.Fields().ByName("id"), protoreflect.ValueOfString(items[i].(string)))
		m.Set(item.Fields().ByName("result"), protoreflect.ValueOfInt32(int32(items[i+1].(int))))
		list.Append(protoreflect.ValueOfMessage(m))
	}
	return in
}

// textOf is an EchoResponse's text and client.
func textOf(out *dynamicpb.Message) (text, client string) {
	return out.Get(echoOut.Fields().ByName("text")).String(), out.Get(echoOut.Fields().ByName("client")).String()
}

// desc is what protoc-gen-go-grpc would generate for the service.
func (e *echoServer) desc() *grpc.ServiceDesc {
	unary := func(name, full string) grpc.MethodDesc {
		return grpc.MethodDesc{MethodName: name, Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := dynamicpb.NewMessage(echoIn)
			if err := dec(in); err != nil {
				return nil, err
			}
			handler := func(ctx context.Context, req any) (any, error) { return e.echo(ctx, req.(*dynamicpb.Message)) }
			if interceptor == nil {
				return handler(ctx, in)
			}
			return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: full}, handler)
		}}
	}
	methods := []grpc.MethodDesc{unary("Echo", throwawayMethod), unary("Shout", throwawayShout)}
	if e.group {
		methods = append(methods, unary("Group", throwawayGroup))
	}
	return &grpc.ServiceDesc{
		ServiceName: throwawayService,
		HandlerType: (*any)(nil),
		Methods:     methods,
		// The batch rpc's stub: the frame serves it in the service's place (Service.BatchRPC).
		Streams: []grpc.StreamDesc{{StreamName: "EchoBatch", ClientStreams: true, ServerStreams: true,
			Handler: func(any, grpc.ServerStream) error { return status.Error(codes.Unimplemented, "served by the frame") }}},
		Metadata: "yardstick/scoring/v1/echo.proto",
	}
}

// gateway is what protoc-gen-grpc-gateway would generate for the service's HTTP rules: decode
// the body, call the rpc on the client connection, forward the answer or the error.
func (e *echoServer) gateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	rules := map[string]string{throwawayPath: throwawayMethod, throwawayShoutPath: throwawayShout}
	if e.group {
		rules[throwawayGroupPath] = throwawayGroup
	}
	for path, method := range rules {
		err := mux.HandlePath(http.MethodPost, path, func(w http.ResponseWriter, req *http.Request, _ map[string]string) {
			ctx, cancel := context.WithCancel(req.Context())
			defer cancel()
			inbound, outbound := runtime.MarshalerForRequest(mux, req)
			annotated, err := runtime.AnnotateContext(ctx, mux, req, method, runtime.WithHTTPPathPattern(path))
			if err != nil {
				runtime.HTTPError(ctx, mux, outbound, w, req, err)
				return
			}
			in, out := dynamicpb.NewMessage(echoIn), dynamicpb.NewMessage(echoOut)
			if err := inbound.NewDecoder(req.Body).Decode(in); err != nil {
				runtime.HTTPError(annotated, mux, outbound, w, req, status.Errorf(codes.InvalidArgument, "%v", err))
				return
			}
			if err := conn.Invoke(annotated, method, in, out); err != nil {
				runtime.HTTPError(annotated, mux, outbound, w, req, err)
				return
			}
			runtime.ForwardResponseMessage(annotated, mux, outbound, w, req, out)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// testWire is the test service's own JSON rule, which the frame applies without knowing the
// message: "words" is another spelling of "text".
var testWire = WireRules{Aliases: map[protoreflect.FullName]map[string]string{"yardstick.scoring.v1.EchoRequest": {"words": "text"}}}

// service is the test service as a service brings itself to the frame: its items take the
// scoring requests' limit, its Group the limits a group forecast has.
func (e *echoServer) service() Service {
	wire := testWire
	wire.ListLimits = map[protoreflect.FullName]map[string]int{"yardstick.scoring.v1.EchoRequest": {"items": e.limits.MaxItems}}
	wire.MaxListLen = max(e.limits.MaxItems, e.limits.MaxStudents, e.limits.MaxCutLevels)
	return Service{
		Register:  func(g grpc.ServiceRegistrar) { g.RegisterService(e.desc(), struct{}{}) },
		Gateway:   e.gateway,
		BatchPath: throwawayBatchPath,
		BatchRPC:  throwawayBatch,
		Wire:      wire,
		Methods:   map[string]MethodLimits{throwawayGroup: e.limits.groupLimits()},
	}
}

// startTest runs a server of the test service on loopback listeners on port 0 (h.echo is its
// handlers).
func startTest(t testing.TB, cfg Config) *harness {
	t.Helper()
	registerThrowaway(t)
	e := newEchoServer()
	e.limits = *limitsOf(cfg)
	h := startService(t, cfg, e.service())
	h.echo = e
	return h
}

// startTestGroup is startTest with the test service's Group served too. Only the tests of group
// admission serve it: a group route raises the gRPC read ceiling to a group message's limit.
func startTestGroup(t testing.TB, cfg Config) *harness {
	t.Helper()
	registerThrowaway(t)
	e := newEchoServer()
	e.group, e.limits = true, *limitsOf(cfg)
	h := startService(t, cfg, e.service())
	h.echo = e
	return h
}

// echoCall makes a unary Echo call of in on the gRPC port.
func (h *harness) echoCall(ctx context.Context, in *dynamicpb.Message, opts ...grpc.CallOption) error {
	return h.grpc.Invoke(ctx, throwawayMethod, in, dynamicpb.NewMessage(echoOut), opts...)
}

// echoOfSize is an EchoRequest of exactly n encoded bytes: text "x" and one item whose id pads
// it, so that Echo answers it with a small response.
func echoOfSize(t testing.TB, n int) *dynamicpb.Message {
	t.Helper()
	k := n
	for range 8 {
		m := echoRequest("x", strings.Repeat("x", k), 1)
		size := proto.Size(m)
		if size == n {
			return m
		}
		k += n - size
	}
	t.Fatalf("no EchoRequest of %d bytes", n)
	return nil
}

// echoGroupBody is a JSON EchoRequest of text with n items, each an object as a group forecast's
// students are: the frame costs a body of Group by its brackets as it costs a group forecast's.
func echoGroupBody(text string, n int) []byte {
	b := []byte(`{"text":"` + text + `","items":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"L%06d","result":%d}`, i, i%2)
	}
	return append(b, "]}"...)
}
