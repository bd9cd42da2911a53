package serve

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// The throwaway endpoint: a service of its own, declared the way a .proto file declares one
// (its rpc, its permission, that a batch record may name it, its HTTP rule), with the handler and
// the two registrations the generators would write. Nothing of the frame knows it.
const (
	throwawayService = "throwaway.v1.EchoService"
	throwawayMethod  = "/" + throwawayService + "/Echo"
	throwawayBatch   = "/" + throwawayService + "/EchoBatch"
	throwawayPath    = "/api/throwaway/echo"
	throwawayPerm    = "score:adaptive" // a permission pkg/token knows: the client registry refuses any other
)

var (
	throwawayOnce sync.Once
	echoIn        protoreflect.MessageDescriptor
	echoOut       protoreflect.MessageDescriptor
	echoRecord    protoreflect.MessageDescriptor
	echoAnswer    protoreflect.MessageDescriptor
)

// registerThrowaway adds the throwaway contract to the registries, as a generated file's init
// does.
func registerThrowaway(t *testing.T) {
	t.Helper()
	throwawayOnce.Do(func() {
		opts := &descriptorpb.MethodOptions{}
		proto.SetExtension(opts, authv1.E_Permission, throwawayPerm)
		proto.SetExtension(opts, batchv1.E_Record, true)
		proto.SetExtension(opts, annotations.E_Http, &annotations.HttpRule{Pattern: &annotations.HttpRule_Post{Post: throwawayPath}, Body: "*"})
		text := func(name string) *descriptorpb.DescriptorProto {
			return &descriptorpb.DescriptorProto{Name: proto.String(name), Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("text"), JsonName: proto.String("text"), Number: proto.Int32(1),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			}}}
		}
		// The batch rpc's record and answer, as the contract's batch rpcs have them:
		// {id, oneof request {a field named for each rpc}}, {id, oneof answer {responses, error}}.
		field := func(name string, num int32, typ string, oneof *int32) *descriptorpb.FieldDescriptorProto {
			f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), OneofIndex: oneof,
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(typ)}
			if typ == "" {
				f.Type, f.TypeName = descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), nil
			}
			return f
		}
		record := &descriptorpb.DescriptorProto{Name: proto.String("EchoBatchRecord"), OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("request")}},
			Field: []*descriptorpb.FieldDescriptorProto{field("id", 1, "", nil), field("echo", 2, ".throwaway.v1.EchoRequest", proto.Int32(0))}}
		answer := &descriptorpb.DescriptorProto{Name: proto.String("EchoBatchAnswer"), OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("answer")}},
			Field: []*descriptorpb.FieldDescriptorProto{field("id", 1, "", nil), field("echo_response", 2, ".throwaway.v1.EchoResponse", proto.Int32(0)),
				field("error", 3, ".yardstick.batch.v1.Status", proto.Int32(0))}}
		batchOpts := &descriptorpb.MethodOptions{}
		proto.SetExtension(batchOpts, authv1.E_Permission, token.PermScoreBatch)
		fdp := &descriptorpb.FileDescriptorProto{
			Name: proto.String("throwaway/v1/echo.proto"), Package: proto.String("throwaway.v1"), Syntax: proto.String("proto3"),
			Dependency:  []string{"yardstick/auth/v1/auth.proto", "yardstick/batch/v1/batch.proto", "google/api/annotations.proto"},
			MessageType: []*descriptorpb.DescriptorProto{text("EchoRequest"), text("EchoResponse"), record, answer},
			Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("EchoService"), Method: []*descriptorpb.MethodDescriptorProto{{
				Name: proto.String("Echo"), InputType: proto.String(".throwaway.v1.EchoRequest"), OutputType: proto.String(".throwaway.v1.EchoResponse"), Options: opts,
			}, {
				Name: proto.String("EchoBatch"), InputType: proto.String(".throwaway.v1.EchoBatchRecord"), OutputType: proto.String(".throwaway.v1.EchoBatchAnswer"),
				ClientStreaming: proto.Bool(true), ServerStreaming: proto.Bool(true), Options: batchOpts,
			}}}},
		}
		fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
		if err != nil {
			panic(err)
		}
		if err := protoregistry.GlobalFiles.RegisterFile(fd); err != nil {
			panic(err)
		}
		echoIn, echoOut = fd.Messages().ByName("EchoRequest"), fd.Messages().ByName("EchoResponse")
		echoRecord, echoAnswer = fd.Messages().ByName("EchoBatchRecord"), fd.Messages().ByName("EchoBatchAnswer")
		for _, md := range []protoreflect.MessageDescriptor{echoIn, echoOut, echoRecord, echoAnswer} {
			if err := protoregistry.GlobalTypes.RegisterMessage(dynamicpb.NewMessageType(md)); err != nil {
				panic(err)
			}
		}
	})
}

// echo is the handler: it answers the request's text, upper-cased.
func echo(_ context.Context, in *dynamicpb.Message) (*dynamicpb.Message, error) {
	out := dynamicpb.NewMessage(echoOut)
	text := in.Get(echoIn.Fields().ByName("text")).String()
	if text == "" {
		return nil, status.Error(codes.InvalidArgument, "text is required")
	}
	out.Set(echoOut.Fields().ByName("text"), protoreflect.ValueOfString(strings.ToUpper(text)))
	return out, nil
}

// throwawayDesc is what protoc-gen-go-grpc would generate for the service.
func throwawayDesc() *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: throwawayService,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Echo", Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := dynamicpb.NewMessage(echoIn)
			if err := dec(in); err != nil {
				return nil, err
			}
			handler := func(ctx context.Context, req any) (any, error) { return echo(ctx, req.(*dynamicpb.Message)) }
			if interceptor == nil {
				return handler(ctx, in)
			}
			return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: throwawayMethod}, handler)
		}}},
		// The batch rpc's stub: the frame serves it in the service's place (Service.BatchRPC).
		Streams: []grpc.StreamDesc{{StreamName: "EchoBatch", ClientStreams: true, ServerStreams: true,
			Handler: func(any, grpc.ServerStream) error { return status.Error(codes.Unimplemented, "served by the frame") }}},
		Metadata: "throwaway/v1/echo.proto",
	}
}

// throwawayGateway is what protoc-gen-grpc-gateway would generate for the service's HTTP rule:
// decode the body, call the rpc on the client connection, forward the answer or the error.
func throwawayGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	return mux.HandlePath(http.MethodPost, throwawayPath, func(w http.ResponseWriter, req *http.Request, _ map[string]string) {
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		inbound, outbound := runtime.MarshalerForRequest(mux, req)
		annotated, err := runtime.AnnotateContext(ctx, mux, req, throwawayMethod, runtime.WithHTTPPathPattern(throwawayPath))
		if err != nil {
			runtime.HTTPError(ctx, mux, outbound, w, req, err)
			return
		}
		in, out := dynamicpb.NewMessage(echoIn), dynamicpb.NewMessage(echoOut)
		if err := inbound.NewDecoder(req.Body).Decode(in); err != nil {
			runtime.HTTPError(annotated, mux, outbound, w, req, status.Errorf(codes.InvalidArgument, "%v", err))
			return
		}
		if err := conn.Invoke(annotated, throwawayMethod, in, out); err != nil {
			runtime.HTTPError(annotated, mux, outbound, w, req, err)
			return
		}
		runtime.ForwardResponseMessage(annotated, mux, outbound, w, req, out)
	})
}

// TestThrowawayEndpoint: an rpc the frame has never heard of, declared in its own contract with
// its permission, its batch option and its HTTP rule, and given a handler, is served on both
// fronts and in an NDJSON batch, with its permission, and nothing of the frame changed for it.
func TestThrowawayEndpoint(t *testing.T) {
	t.Parallel()
	registerThrowaway(t)
	secret, hash, err := token.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	clients := filepath.Join(t.TempDir(), "clients.yaml")
	yaml := "clients:\n" +
		"  - clientId: echoer\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"" + throwawayPerm + "\", \"score:batch\"]\n" +
		"  - clientId: other\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"score:standard\", \"score:batch\"]\n"
	if err := os.WriteFile(clients, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.ClientsFile = clients
	h := startService(t, cfg, Service{
		Register:  func(g grpc.ServiceRegistrar) { g.RegisterService(throwawayDesc(), struct{}{}) },
		Gateway:   throwawayGateway,
		BatchPath: "/api/score/batch", BatchPermission: token.PermScoreBatch,
		BatchRPC: throwawayBatch,
	})
	echoer, other := h.token("echoer", secret), h.token("other", secret)

	t.Run("JSON", func(t *testing.T) {
		for _, tc := range []struct {
			name, tok, body string
			status          int
			want            string
		}{
			{"answered", echoer, `{"text":"hello"}`, http.StatusOK, `{"text":"HELLO"}`},
			{"the handler's error", echoer, `{}`, http.StatusBadRequest, `text is required`},
			{"without its permission", other, `{"text":"hello"}`, http.StatusForbidden, throwawayPerm},
			{"without a token", "", `{"text":"hello"}`, http.StatusUnauthorized, "Authentication failed."},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var header []string
				if tc.tok != "" {
					header = []string{"Authorization", "Bearer " + tc.tok}
				}
				r := h.post(throwawayPath, tc.body, header...)
				if r.status != tc.status || !strings.Contains(string(r.body), tc.want) {
					t.Errorf("got %d %s; want %d with %s", r.status, r.body, tc.status, tc.want)
				}
			})
		}
	})

	t.Run("gRPC", func(t *testing.T) {
		for _, tc := range []struct {
			name, tok, text string
			code            codes.Code
			want            string
		}{
			{"answered", echoer, "hello", codes.OK, "HELLO"},
			{"the handler's error", echoer, "", codes.InvalidArgument, ""},
			{"without its permission", other, "hello", codes.PermissionDenied, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tc.tok)
				in, out := dynamicpb.NewMessage(echoIn), dynamicpb.NewMessage(echoOut)
				in.Set(echoIn.Fields().ByName("text"), protoreflect.ValueOfString(tc.text))
				err := h.grpc.Invoke(ctx, throwawayMethod, in, out)
				if status.Code(err) != tc.code || out.Get(echoOut.Fields().ByName("text")).String() != tc.want {
					t.Errorf("got %v, %v; want %v, %q", out, err, tc.code, tc.want)
				}
			})
		}
	})

	t.Run("gRPC batch", func(t *testing.T) {
		for _, tc := range []struct {
			name, tok string
			want      string // the answer's response text, or "" for an error
			code      codes.Code
		}{
			{"answered", echoer, "BATCHED", codes.OK},
			{"without its permission", other, "", codes.PermissionDenied},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tc.tok)
				st, err := h.grpc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, throwawayBatch)
				if err != nil {
					t.Fatal(err)
				}
				in := dynamicpb.NewMessage(echoIn)
				in.Set(echoIn.Fields().ByName("text"), protoreflect.ValueOfString("batched"))
				rec := dynamicpb.NewMessage(echoRecord)
				rec.Set(echoRecord.Fields().ByName("id"), protoreflect.ValueOfString("1"))
				rec.Set(echoRecord.Fields().ByName("echo"), protoreflect.ValueOfMessage(in))
				if err := st.SendMsg(rec); err != nil {
					t.Fatal(err)
				}
				if err := st.CloseSend(); err != nil {
					t.Fatal(err)
				}
				ans := dynamicpb.NewMessage(echoAnswer)
				if err := st.RecvMsg(ans); err != nil {
					t.Fatalf("answer: %v", err)
				}
				got := ans.Get(echoAnswer.Fields().ByName("echo_response")).Message().Get(echoOut.Fields().ByName("text")).String()
				var code codes.Code
				if ans.Has(echoAnswer.Fields().ByName("error")) {
					code = codes.Code(ans.Get(echoAnswer.Fields().ByName("error")).Message().Get(
						(&batchv1.Status{}).ProtoReflect().Descriptor().Fields().ByName("code")).Int())
				}
				if got != tc.want || code != tc.code || ans.Get(echoAnswer.Fields().ByName("id")).String() != "1" {
					t.Errorf("got answer %v; want id 1 with %q, code %v", ans, tc.want, tc.code)
				}
			})
		}
	})

	t.Run("NDJSON batch", func(t *testing.T) {
		body := `{"id":"1","path":"` + throwawayPath + `","body":{"text":"batched"}}` + "\n" +
			`{"id":"2","path":"` + throwawayPath + `","body":{}}` + "\n"
		for _, tc := range []struct {
			name, tok string
			want      []string
		}{
			{"answered", echoer, []string{`"id":"1","status":200,"body":{"text":"BATCHED"}`, `"id":"2","status":400`}},
			{"without its permission", other, []string{`"id":"1","status":403`, `"id":"2","status":403`}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := h.do(http.MethodPost, "/api/score/batch", "application/x-ndjson", body, "Authorization", "Bearer "+tc.tok)
				if r.status != http.StatusOK {
					t.Fatalf("got %d %s; want 200", r.status, r.body)
				}
				for _, w := range tc.want {
					if !strings.Contains(string(r.body), w) {
						t.Errorf("answers %s; want one with %s", r.body, w)
					}
				}
			})
		}
	})
}
