package authz

import (
	"net/http"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// ServeAuthToken is POST /authToken as the HTTP front serves it (another method 405, the request
// in the context's reqinfo for the caller's address), without the front's gate and chain: the
// login is the IssueToken handler called directly, as this package's tests call the gRPC door's.
func (a *Authorizer) ServeAuthToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		rpcerr.WriteStatus(w, http.StatusMethodNotAllowed)
		return
	}
	ctx := reqinfo.With(r.Context(), &reqinfo.Info{HTTPRequest: r})
	a.AnswerAuthToken(w, r, func(req *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
		return a.TokenService().IssueToken(ctx, req)
	})
}
