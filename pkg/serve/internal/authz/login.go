package authz

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// TokenService is the one way to a token, for both ports (the HTTP front calls its IssueToken
// through the chain: AnswerAuthToken); a token is for the service that issued it.
func (a *Authorizer) TokenService() authv1.TokenServiceServer { return tokenService{a: a} }

type tokenService struct {
	authv1.UnimplementedTokenServiceServer
	a *Authorizer
}

// IssueToken logs a client in, throttled by its id and the caller's address. Its errors are gRPC
// statuses: bad credentials 401, no right on this service 403, too many failures 429, no hashing
// slot free 503.
func (t tokenService) IssueToken(ctx context.Context, req *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
	a, clientID, secret := t.a, req.GetClientId(), req.GetClientSecret()
	if clientID == "" || secret == "" {
		return nil, rpcerr.NotAuthenticated("Authentication failed.", "clientId and clientSecret are both required.")
	}
	tok, err := a.issuer.Authenticate(clientID, secret, a.service, callerAddress(ctx, a.trusted))
	var throttled *token.ThrottledError
	var busy *token.BusyError
	switch {
	case err == nil:
		noteClient(ctx, clientID)
		return &authv1.IssueTokenResponse{AccessToken: tok.AccessToken, ExpiresIn: int32(tok.ExpiresIn)}, nil
	case errors.As(err, &throttled):
		return nil, rpcerr.Throttled(throttled.RetryAfter)
	case errors.As(err, &busy): // Unavailable, which clients may retry
		secs, ri := rpcerr.Retry(busy.RetryAfter)
		return nil, rpcerr.New(codes.Unavailable, rpcerr.ExceptionAPI, "Service busy.",
			fmt.Sprintf("Too many logins are being checked; retry after %d seconds.", secs), ri)
	case errors.Is(err, token.ErrNotAuthenticated):
		return nil, rpcerr.NotAuthenticated("Authentication failed.", "The client id or client secret is incorrect.")
	case errors.Is(err, token.ErrPermissionDenied):
		return nil, rpcerr.PermissionDenied("Permission denied: the client lacks permission for this service.",
			fmt.Sprintf("The client has no permission on the %s service.", a.service))
	default:
		return nil, rpcerr.Fault(ctx, a.log, "issue token", err)
	}
}
