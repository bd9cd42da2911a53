package httpfront

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/inproc"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/telemetry"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	_ "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1" // the record option the contract below uses
)

// The front's own server: a Handler built from its parts as the frame builds it — routes read
// from a test service's contract, a gate over a token registry (a keys dir and a clients file) and
// a memory budget, the in-process channel serving the service's handler, the request line's
// telemetry, paced bodies — on a real loopback listener. What needs the frame's own http.Server
// (its header limit, its connection writer) stays in pkg/serve's tests.

const (
	echoMethod   = "/yardstick.scoring.v1.FrontTestService/Echo"
	echoPath     = "/api/fronttest/echo"
	batchPath    = "/api/fronttest/batch"
	clientSecret = "s3cret-for-tests"
	// defaultGrace and defaultRate are the frame's YARDSTICK_BODY_GRACE and YARDSTICK_MIN_BODY_RATE.
	defaultGrace = 10 * time.Second
	defaultRate  = 64 << 10
)

// frontTestContract is the test service's .proto file as protoc describes it: Echo answers its
// text upper-cased (a batch record may name it), EchoBatch is the batch path's rpc, each with a
// permission of its own. Its package makes them the scoring service's permissions.
const frontTestContract = `
name: "yardstick/scoring/v1/fronttest.proto" package: "yardstick.scoring.v1" syntax: "proto3"
dependency: ["yardstick/auth/v1/auth.proto", "yardstick/batch/v1/batch.proto", "google/api/annotations.proto"]
message_type { name: "FrontTestItem"
  field { name: "id" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "id" }
  field { name: "result" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 json_name: "result" } }
message_type { name: "FrontTestRequest"
  field { name: "text" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "text" }
  field { name: "items" number: 2 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".yardstick.scoring.v1.FrontTestItem" json_name: "items" } }
message_type { name: "FrontTestResponse"
  field { name: "text" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "text" } }
service { name: "FrontTestService"
  method { name: "Echo" input_type: ".yardstick.scoring.v1.FrontTestRequest" output_type: ".yardstick.scoring.v1.FrontTestResponse"
    options { [yardstick.auth.v1.permission]: "fronttest:echo" [yardstick.batch.v1.record]: true
      [google.api.http] { post: "/api/fronttest/echo" body: "*" } } }
  method { name: "EchoBatch" input_type: ".yardstick.scoring.v1.FrontTestRequest" output_type: ".yardstick.scoring.v1.FrontTestResponse"
    client_streaming: true server_streaming: true options { [yardstick.auth.v1.permission]: "fronttest:batch" } } }
`

// frontTestMessages registers the contract, as a generated file's init does, and returns its
// request and response.
var frontTestMessages = sync.OnceValues(func() (in, out protoreflect.MessageDescriptor) {
	var fdp descriptorpb.FileDescriptorProto
	if err := prototext.Unmarshal([]byte(frontTestContract), &fdp); err != nil {
		panic(err)
	}
	fd, err := protodesc.NewFile(&fdp, protoregistry.GlobalFiles)
	if err == nil {
		err = protoregistry.GlobalFiles.RegisterFile(fd)
	}
	if err != nil {
		panic(err)
	}
	return fd.Messages().ByName("FrontTestRequest"), fd.Messages().ByName("FrontTestResponse")
})

// frontTestService is what protoc-gen-go-grpc would generate for the service, with Echo's handler:
// the text upper-cased; no text is InvalidArgument. The batch rpc's stub is never called: the
// front serves the batch path.
func frontTestService() *grpc.ServiceDesc {
	in, out := frontTestMessages()
	echo := func(_ context.Context, req any) (any, error) {
		text := req.(*dynamicpb.Message).Get(in.Fields().ByName("text")).String()
		if text == "" {
			return nil, status.Error(codes.InvalidArgument, "text is required")
		}
		resp := dynamicpb.NewMessage(out)
		resp.Set(out.Fields().ByName("text"), protoreflect.ValueOfString(strings.ToUpper(text)))
		return resp, nil
	}
	return &grpc.ServiceDesc{ServiceName: "yardstick.scoring.v1.FrontTestService", HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Echo", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			req := dynamicpb.NewMessage(in)
			if err := dec(req); err != nil {
				return nil, err
			}
			return ic(ctx, req, &grpc.UnaryServerInfo{Server: srv, FullMethod: echoMethod}, echo)
		}}},
		Streams: []grpc.StreamDesc{{StreamName: "EchoBatch", ClientStreams: true, ServerStreams: true,
			Handler: func(any, grpc.ServerStream) error { return status.Error(codes.Unimplemented, "a stub") }}},
	}
}

// frontServer is the front on a loopback listener, and the token registry its gate checks.
type frontServer struct {
	addr string // 127.0.0.1:port
	reg  *token.Issuer
}

// startFront serves the front with bodies paced by grace and rate until the test ends.
func startFront(t *testing.T, grace time.Duration, rate int64) *frontServer {
	t.Helper()
	frontTestMessages() // before the registry reads the clients file: its permissions are the contract's
	reg := testIssuer(t)
	log := slog.New(slog.DiscardHandler)
	ch := inproc.New(func(ctx context.Context, tk *gate.Ticket, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if tk == nil || tk.Method != info.FullMethod { // as the frame's chain: a call not admitted fails closed
			return nil, rpcerr.NotAuthenticated("Authentication failed.", "The call was not admitted for this method.")
		}
		return h(ctx, req)
	})
	ch.RegisterService(frontTestService(), struct{}{})
	az := authz.New(reg, token.ServiceScoring, log, nil)
	authv1.RegisterTokenServiceServer(ch, az.TokenService()) // /authToken, as the frame registers it
	table, err := routes.Build(ch.ServiceInfo(), 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	table.AddStream(batchPath, routes.Batch, table.ByMethod["/yardstick.scoring.v1.FrontTestService/EchoBatch"].Rule)
	rec := telemetry.NewRecorder(log, token.ServiceScoring)
	budget := admission.New(256<<20, rec.Registry(), token.ServiceScoring)
	budget.SetWait(2 * time.Second)
	echoIn, _ := frontTestMessages()
	f := New(Options{Routes: table, Gate: &gate.Gate{Authz: az, Budget: budget}, Channel: ch, Gateway: NewMux(),
		Stream: batch.Options{Log: log, Trusted: true}, Codec: jsonwire.New(jsonwire.Options{ListLimits: map[protoreflect.FullName]map[string]int{echoIn.FullName(): {"items": 5000}}, MaxListLen: 100_000})})
	srv := httptest.NewServer(PaceBodies(grace, rate, rec.ObserveHTTP(table.Label, f)))
	t.Cleanup(srv.Close)
	return &frontServer{addr: strings.TrimPrefix(srv.URL, "http://"), reg: reg}
}

// testIssuer is a token registry over a new signing key and a clients file of one client,
// "caller" (clientSecret), with both of the test service's permissions.
func testIssuer(t *testing.T) *token.Issuer {
	t.Helper()
	dir := t.TempDir()
	keys, clients := filepath.Join(dir, "keys"), filepath.Join(dir, "clients.yaml")
	if err := os.Mkdir(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	kid, pem, err := token.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keys, kid+".pem"), pem, 0o600); err != nil {
		t.Fatal(err)
	}
	hash, err := token.HashSecret(clientSecret)
	if err != nil {
		t.Fatal(err)
	}
	yaml := "clients:\n  - clientId: caller\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"fronttest:echo\", \"fronttest:batch\"]\n"
	if err := os.WriteFile(clients, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := token.New(token.Options{ClientsFile: clients, KeysDir: keys, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// bearer is an Authorization header value of a token of client.
func (s *frontServer) bearer(t *testing.T, client string) string {
	t.Helper()
	tok, err := s.reg.Authenticate(client, clientSecret, token.ServiceScoring, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + tok.AccessToken
}

// answer is an HTTP answer read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// post POSTs a JSON body to path with the header's name, value pairs.
func (s *frontServer) post(t *testing.T, path, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+s.addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// errorBody is a's error body, which must have its three strings and be labelled JSON.
func errorBody(t *testing.T, a answer) rpcerr.ErrorBody {
	t.Helper()
	var m map[string]json.RawMessage
	var b rpcerr.ErrorBody
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%.300s", err, a.body)
	}
	for _, k := range []string{"message", "exceptionType", "additionalInfo"} {
		var s string
		if err := json.Unmarshal(m[k], &s); err != nil {
			t.Fatalf("error body lacks string %q: %.300s", k, a.body)
		}
	}
	if err := json.Unmarshal(a.body, &b); err != nil {
		t.Fatal(err)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type: got %q; want application/json", ct)
	}
	return b
}
