package inproc

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// tokens is a TokenService that answers with the client id it was given, and fails for "bad".
type tokens struct {
	authv1.UnimplementedTokenServiceServer
	got *authv1.IssueTokenRequest // the request the handler was handed
}

func (s *tokens) IssueToken(_ context.Context, r *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
	s.got = r
	if r.GetClientId() == "bad" {
		return nil, status.Error(codes.PermissionDenied, "no")
	}
	return &authv1.IssueTokenResponse{AccessToken: "token-of-" + r.GetClientId(), ExpiresIn: 60}, nil
}

// recording is a chain that notes each call's method and ticket, and may refuse it.
type recording struct {
	methods []string
	tickets []*gate.Ticket
	refuse  error
}

func (c *recording) chain(ctx context.Context, t *gate.Ticket, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	c.methods = append(c.methods, info.FullMethod)
	c.tickets = append(c.tickets, t)
	if c.refuse != nil {
		return nil, c.refuse
	}
	return h(ctx, req)
}

func newChannel(t *testing.T) (*Channel, *tokens, *recording) {
	t.Helper()
	rec := &recording{}
	ch := New(rec.chain)
	svc := &tokens{}
	authv1.RegisterTokenServiceServer(ch, svc)
	return ch, svc, rec
}

// TestCall: a call with its ticket reaches the handler through the chain, with the caller's very
// request and ticket handed to the chain, and gets the handler's answer and its error as they are.
func TestCall(t *testing.T) {
	t.Parallel()
	ch, svc, rec := newChannel(t)
	const method = authv1.TokenService_IssueToken_FullMethodName
	req := &authv1.IssueTokenRequest{ClientId: proto.String("demo")}
	ticket := &gate.Ticket{Method: method}
	resp, err := ch.Call(context.Background(), ticket, method, req)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&authv1.IssueTokenResponse{AccessToken: "token-of-demo", ExpiresIn: 60}); !proto.Equal(resp.(proto.Message), want) {
		t.Errorf("got %v; want %v", resp, want)
	}
	if svc.got != req {
		t.Error("the handler got a copy of the request; want the caller's own")
	}
	if len(rec.methods) != 1 || rec.methods[0] != method {
		t.Errorf("chain ran for %v; want once, for %v", rec.methods, method)
	}
	if rec.tickets[0] != ticket {
		t.Errorf("chain handed ticket %p; want the caller's %p", rec.tickets[0], ticket)
	}
	_, err = ch.Call(context.Background(), ticket, method, &authv1.IssueTokenRequest{ClientId: proto.String("bad")})
	if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != "no" {
		t.Errorf("got %v; want the handler's PermissionDenied as it is", err)
	}
}

// TestChainRefuses: a call the chain refuses never reaches the handler.
func TestChainRefuses(t *testing.T) {
	t.Parallel()
	ch, svc, rec := newChannel(t)
	rec.refuse = status.Error(codes.Unauthenticated, "who?")
	const method = authv1.TokenService_IssueToken_FullMethodName
	_, err := ch.Call(context.Background(), &gate.Ticket{Method: method}, method, &authv1.IssueTokenRequest{ClientId: proto.String("demo")})
	if status.Code(err) != codes.Unauthenticated || svc.got != nil {
		t.Errorf("got %v, handler handed %v; want Unauthenticated and the handler not run", err, svc.got)
	}
}

// TestInvokeBringsNoTicket: a generated client on the channel (as grpc-gateway's registration
// makes) hands the chain no ticket, whatever its context carries: a chain that refuses a call
// without one (the server's) refuses it before the handler, and one that lets it through still
// gets no answer out, Internal instead.
func TestInvokeBringsNoTicket(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		refuse  error
		code    codes.Code
		handled bool
	}{
		{"the chain refuses", status.Error(codes.Unauthenticated, "not admitted"), codes.Unauthenticated, false},
		{"the chain lets it through", nil, codes.Internal, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ch, svc, rec := newChannel(t)
			rec.refuse = tc.refuse
			resp, err := authv1.NewTokenServiceClient(ch).IssueToken(context.Background(), &authv1.IssueTokenRequest{ClientId: proto.String("demo")})
			if status.Code(err) != tc.code || resp != nil {
				t.Errorf("got %v, %v; want %v and no answer", resp, err, tc.code)
			}
			if len(rec.tickets) != 1 || rec.tickets[0] != nil {
				t.Errorf("chain handed tickets %v; want none, once", rec.tickets)
			}
			if handled := svc.got != nil; handled != tc.handled {
				t.Errorf("handler run: got %v; want %v", handled, tc.handled)
			}
		})
	}
}

// TestNewRequest: a new request of a method is a fresh message of the type its generated handler
// decodes into, which Call then hands to the handler as it is.
func TestNewRequest(t *testing.T) {
	t.Parallel()
	ch, svc, rec := newChannel(t)
	req, err := ch.NewRequest(authv1.TokenService_IssueToken_FullMethodName)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := ch.NewRequest(authv1.TokenService_IssueToken_FullMethodName)
	if req == again {
		t.Error("NewRequest gave the same message twice; want a new one each call")
	}
	in, ok := req.(*authv1.IssueTokenRequest)
	if !ok {
		t.Fatalf("got a %T; want a *authv1.IssueTokenRequest", req)
	}
	in.ClientId = proto.String("decoded")
	ticket := &gate.Ticket{Method: authv1.TokenService_IssueToken_FullMethodName}
	resp, err := ch.Call(context.Background(), ticket, authv1.TokenService_IssueToken_FullMethodName, req)
	if err != nil || resp.(*authv1.IssueTokenResponse).GetAccessToken() != "token-of-decoded" || svc.got != in {
		t.Errorf("got %v, %v; want the request itself answered", resp, err)
	}
	if len(rec.tickets) != 1 || rec.tickets[0] != ticket {
		t.Errorf("chain handed tickets %v; want the caller's %p once", rec.tickets, ticket)
	}
}

// TestUnknownAndStreams: a method not registered, by Call, NewRequest or Invoke, and a stream are
// refused with a status, never a panic.
func TestUnknownAndStreams(t *testing.T) {
	t.Parallel()
	ch, _, _ := newChannel(t)
	ctx := context.Background()
	if _, err := ch.Call(ctx, nil, "/no.Such/Method", nil); status.Code(err) != codes.Unimplemented {
		t.Errorf("unknown method: got %v; want Unimplemented", err)
	}
	if _, err := ch.NewRequest("/no.Such/Method"); status.Code(err) != codes.Unimplemented {
		t.Errorf("unknown method's request: got %v; want Unimplemented", err)
	}
	if _, err := ch.NewStream(ctx, &grpc.StreamDesc{}, "/a.B/Stream"); status.Code(err) != codes.Unimplemented {
		t.Errorf("stream: got %v; want Unimplemented", err)
	}
	if err := ch.Invoke(ctx, "/no.Such/Method", nil, nil); status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "/no.Such/Method") {
		t.Errorf("unknown method by Invoke: got %v; want Unimplemented naming it", err)
	}
}

// TestServiceInfo: the channel describes what it holds as grpc.Server does, for the route table,
// and hands the services on in their order, for the gRPC server.
func TestServiceInfo(t *testing.T) {
	t.Parallel()
	ch, svc, _ := newChannel(t)
	info := ch.ServiceInfo()
	si, ok := info[authv1.TokenService_ServiceDesc.ServiceName]
	if len(info) != 1 || !ok || len(si.Methods) != 1 || si.Methods[0].Name != "IssueToken" {
		t.Errorf("got %+v; want TokenService with IssueToken", info)
	}
	if s := ch.Services(); len(s) != 1 || s[0].Desc != &authv1.TokenService_ServiceDesc || s[0].Impl != svc {
		t.Errorf("got %+v; want the token service as registered", s)
	}
}
