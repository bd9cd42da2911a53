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

// The throwaway endpoint: a service of its own, declared the way a new .proto file of the
// scoring service's contract (yardstick/scoring/v1/) declares one: its rpcs, their permissions,
// that a batch record may name it, its HTTP rule; with the handler and the two registrations the
// generators would write. Nothing of the frame or of pkg/token knows it: the clients file grants
// its permissions because the contract declares them, and its package makes them scoring's.
const (
	throwawayService   = "yardstick.scoring.v1.EchoService"
	throwawayMethod    = "/" + throwawayService + "/Echo"
	throwawayBatch     = "/" + throwawayService + "/EchoBatch"
	throwawayPath      = "/api/throwaway/echo"
	throwawayBatchPath = "/api/throwaway/batch"
	throwawayPerm      = "throwaway:echo"
	throwawayBatchPerm = "throwaway:batch"
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
			Field: []*descriptorpb.FieldDescriptorProto{field("id", 1, "", nil), field("echo", 2, ".yardstick.scoring.v1.EchoRequest", proto.Int32(0))}}
		answer := &descriptorpb.DescriptorProto{Name: proto.String("EchoBatchAnswer"), OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("answer")}},
			Field: []*descriptorpb.FieldDescriptorProto{field("id", 1, "", nil), field("echo_response", 2, ".yardstick.scoring.v1.EchoResponse", proto.Int32(0)),
				field("error", 3, ".yardstick.batch.v1.Status", proto.Int32(0))}}
		batchOpts := &descriptorpb.MethodOptions{}
		proto.SetExtension(batchOpts, authv1.E_Permission, throwawayBatchPerm)
		fdp := &descriptorpb.FileDescriptorProto{
			Name: proto.String("yardstick/scoring/v1/echo.proto"), Package: proto.String("yardstick.scoring.v1"), Syntax: proto.String("proto3"),
			Dependency:  []string{"yardstick/auth/v1/auth.proto", "yardstick/batch/v1/batch.proto", "google/api/annotations.proto"},
			MessageType: []*descriptorpb.DescriptorProto{text("EchoRequest"), text("EchoResponse"), record, answer},
			Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("EchoService"), Method: []*descriptorpb.MethodDescriptorProto{{
				Name: proto.String("Echo"), InputType: proto.String(".yardstick.scoring.v1.EchoRequest"), OutputType: proto.String(".yardstick.scoring.v1.EchoResponse"), Options: opts,
			}, {
				Name: proto.String("EchoBatch"), InputType: proto.String(".yardstick.scoring.v1.EchoBatchRecord"), OutputType: proto.String(".yardstick.scoring.v1.EchoBatchAnswer"),
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
		Metadata: "yardstick/scoring/v1/echo.proto",
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
// fronts and in batches to a client the clients file grants its permission, refused to one
// without it, and nothing of the frame or of pkg/token changed for it.
func TestThrowawayEndpoint(t *testing.T) {
	t.Parallel()
	registerThrowaway(t)
	secret, hash, err := token.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	entry := func(id, services string, perms ...string) string {
		return "  - clientId: " + id + "\n    secretHash: " + hash + "\n    services: [" + services + "]\n" +
			"    permissions: [\"" + strings.Join(perms, `", "`) + "\"]\n"
	}
	clientsFile := func(t *testing.T, entries ...string) string {
		path := filepath.Join(t.TempDir(), "clients.yaml")
		if err := os.WriteFile(path, []byte("clients:\n"+strings.Join(entries, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	// The contract's package makes its permissions the scoring service's: a client must list it.
	t.Run("its permissions are scoring's", func(t *testing.T) {
		_, err := token.New(token.Options{ClientsFile: clientsFile(t, entry("reader", "forecast", throwawayPerm)), Dev: true})
		if want := `permission "` + throwawayPerm + `" needs service "scoring"`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v; want an error with %s", err, want)
		}
	})

	cfg := testConfig(t)
	cfg.ClientsFile = clientsFile(t,
		entry("echoer", "scoring", throwawayPerm, throwawayBatchPerm),
		entry("other", "scoring", "score:standard", throwawayBatchPerm), // the batches, not the rpc
		entry("unbatched", "scoring", throwawayPerm))                    // the rpc, not the batches
	h := startService(t, cfg, Service{
		Register:  func(g grpc.ServiceRegistrar) { g.RegisterService(throwawayDesc(), struct{}{}) },
		Gateway:   throwawayGateway,
		BatchPath: throwawayBatchPath,
		BatchRPC:  throwawayBatch,
		// Its own JSON rule, which the frame applies without knowing the message.
		Wire: WireRules{Aliases: map[protoreflect.FullName]map[string]string{"yardstick.scoring.v1.EchoRequest": {"words": "text"}}},
	})
	echoer, other, unbatched := h.token("echoer", secret), h.token("other", secret), h.token("unbatched", secret)

	t.Run("JSON", func(t *testing.T) {
		for _, tc := range []struct {
			name, tok, body string
			status          int
			want            string
		}{
			{"answered", echoer, `{"text":"hello"}`, http.StatusOK, `{"text":"HELLO"}`},
			{"its own alias", echoer, `{"words":"hello"}`, http.StatusOK, `{"text":"HELLO"}`},
			{"a field it has no rule for", echoer, `{"itemid":"hello"}`, http.StatusBadRequest, `itemid`},
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

	t.Run("gRPC batch", func(t *testing.T) { testThrowawayGRPCBatch(t, h, echoer, other, unbatched) })

	t.Run("NDJSON batch", func(t *testing.T) {
		body := `{"id":"1","path":"` + throwawayPath + `","body":{"text":"batched"}}` + "\n" +
			`{"id":"2","path":"` + throwawayPath + `","body":{}}` + "\n"
		for _, tc := range []struct {
			name, tok string
			status    int
			want      []string
		}{
			{"answered", echoer, http.StatusOK, []string{`"id":"1","status":200,"body":{"text":"BATCHED"}`, `"id":"2","status":400`}},
			{"without its permission", other, http.StatusOK, []string{`"id":"1","status":403`, `"id":"2","status":403`}},
			{"without the batch permission", unbatched, http.StatusForbidden, []string{throwawayBatchPerm}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := h.do(http.MethodPost, throwawayBatchPath, "application/x-ndjson", body, "Authorization", "Bearer "+tc.tok)
				if r.status != tc.status {
					t.Fatalf("got %d %s; want %d", r.status, r.body, tc.status)
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

// testThrowawayGRPCBatch: the throwaway rpc's records in a gRPC batch, answered to echoer,
// refused one by one to other (the batch, not the rpc), refused whole to unbatched.
func testThrowawayGRPCBatch(t *testing.T, h *harness, echoer, other, unbatched string) {
	for _, tc := range []struct {
		name, tok string
		stream    codes.Code // the stream's own status: without the batch permission, refused whole
		want      string     // the answer's response text, or "" for an error
		code      codes.Code // the answer's error code
	}{
		{"answered", echoer, codes.OK, "BATCHED", codes.OK},
		{"without its permission", other, codes.OK, "", codes.PermissionDenied},
		{"without the batch permission", unbatched, codes.PermissionDenied, "", codes.OK},
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
			// A refused stream may end before the record is sent; its status comes with RecvMsg.
			if err := st.SendMsg(rec); err != nil && tc.stream == codes.OK {
				t.Fatal(err)
			}
			if err := st.CloseSend(); err != nil {
				t.Fatal(err)
			}
			ans := dynamicpb.NewMessage(echoAnswer)
			if err := st.RecvMsg(ans); status.Code(err) != tc.stream {
				t.Fatalf("answer: got %v; want %v", err, tc.stream)
			} else if err != nil {
				return
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
}
