package httpfront

import (
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// authTokenPath is the token path, served by every service as a call of TokenService.IssueToken.
const authTokenPath = "/authToken"

// serveAuthToken serves POST /authToken as a call of its rpc, IssueToken, whose door reads
// credentials in the shapes the JSON codec does not (forms, HTTP Basic, OAuth 2.0) and answers
// in them (internal/authz, AnswerAuthToken): the gate (its public rule, a content coding refused,
// the declared size held to routes.AuthTokenBodyLimit), then the door, which calls the rpc
// through the chain with the ticket. The login throttle is the rpc's own, on either port.
func (f *Handler) serveAuthToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		rpcerr.WriteStatus(w, http.StatusMethodNotAllowed)
		return
	}
	rt := f.Routes.ByPath[authTokenPath]
	reqinfo.From(r.Context()).HTTPRequest = r // the caller's address, for the login throttle
	check := func() error {
		if refuseEncoded(w, r) {
			return errAnswered
		}
		return nil
	}
	admitted, t, err := f.Gate.Admit(r.Context(), gate.Call{Route: rt, Front: "http", Size: r.ContentLength}, check)
	if err != nil {
		if errors.Is(err, gate.ErrTooLarge) {
			authz.NoStore(w.Header()) // as every answer of the door's, its own 413 among them
		}
		f.refuseAdmit(w, r, rt, err)
		return
	}
	defer t.Release()
	f.Authz.AnswerAuthToken(w, r, func(req *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
		resp, err := f.Channel.Call(admitted, t, rt.Method, req)
		if err != nil {
			return nil, err
		}
		out, ok := resp.(*authv1.IssueTokenResponse)
		if !ok {
			return nil, status.Error(codes.Internal, fmt.Sprintf("httpfront: %s answered a %T", rt.Method, resp))
		}
		return out, nil
	})
}
