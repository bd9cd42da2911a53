package httpfront

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/inproc"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// issuer answers with a token of the client id it was given, and refuses a call without a client
// id or a secret.
type issuer struct {
	authv1.UnimplementedTokenServiceServer
	calls int
}

func (s *issuer) IssueToken(_ context.Context, r *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
	s.calls++
	var p rpcerr.Problems
	if r.GetClientId() == "" {
		p.Add("clientId", "is required")
	}
	if r.GetClientSecret() == "" {
		p.Add("clientSecret", "is required")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return &authv1.IssueTokenResponse{AccessToken: "token-of-" + r.GetClientId(), ExpiresIn: 60}, nil
}

// TestInvoke: a call's body is decoded by the front's codec into the rpc's own request, the rpc
// runs through the channel's chain with the call's ticket, and the answer is the codec's bytes;
// a body that is not one object ends the call before the handler, while field problems still
// reach it and come back with its own; an rpc the channel does not serve is Unimplemented.
func TestInvoke(t *testing.T) {
	t.Parallel()
	const method = authv1.TokenService_IssueToken_FullMethodName
	for _, tc := range []struct {
		name, method, body string
		code               codes.Code
		want               string // the answer, or a piece of the error
		calls              int    // the handler's
	}{
		{"answered", method, `{"clientId":"demo","clientSecret":"s"}`, codes.OK, `{"accessToken":"token-of-demo","expiresIn":60}`, 1},
		{"not an object", method, `[1]`, codes.InvalidArgument, "must be a JSON object", 0},
		{"a field's problem and the handler's", method, `{"clientId":7}`, codes.InvalidArgument, "clientId: must be a string, got a number; clientSecret: is required; ", 1},
		{"not served", "/no.Such/Method", `{}`, codes.Unimplemented, "no unary method", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc := &issuer{}
			var tickets []*gate.Ticket
			ch := inproc.New(func(ctx context.Context, tk *gate.Ticket, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				tickets = append(tickets, tk)
				return h(ctx, req)
			})
			authv1.RegisterTokenServiceServer(ch, svc)
			f := New(Options{Routes: &routes.Table{}, Channel: ch, Codec: jsonwire.New(jsonwire.Options{})})
			ticket := &gate.Ticket{Method: tc.method}
			got, err := f.invoke(context.Background(), ticket, &routes.Route{Method: tc.method}, []byte(tc.body))
			if code := status.Code(err); code != tc.code {
				t.Fatalf("code: got %v (%v); want %v", code, err, tc.code)
			}
			if err == nil && string(got) != tc.want {
				t.Errorf("answer: got %s; want %s", got, tc.want)
			}
			if err != nil && !strings.Contains(err.Error()+detailsText(err), tc.want) {
				t.Errorf("error: got %v (%s); want it to name %q", err, detailsText(err), tc.want)
			}
			if svc.calls != tc.calls {
				t.Errorf("handler calls: got %d; want %d", svc.calls, tc.calls)
			}
			if tc.calls == 1 && (len(tickets) != 1 || tickets[0] != ticket) {
				t.Errorf("chain handed tickets %v; want the call's %p once", tickets, ticket)
			}
		})
	}
}

// detailsText is an error's field violations as its body lists them: "field: message; ".
func detailsText(err error) string {
	var b strings.Builder
	problems := rpcerr.ToHTTP(err).Body.ValidationErrors
	for _, field := range slices.Sorted(maps.Keys(problems)) {
		for _, m := range problems[field] {
			b.WriteString(field + ": " + m + "; ")
		}
	}
	return b.String()
}
