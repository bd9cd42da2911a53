package authz

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// Login is the one way to a token, for both fronts. Its errors are gRPC statuses: bad credentials
// 401, no right on this service 403, too many failures 429, no hashing slot free 503.
func (a *Authorizer) Login(ctx context.Context, clientID, secret, remoteAddr string) (token.Token, error) {
	if clientID == "" || secret == "" {
		return token.Token{}, rpcerr.NotAuthenticated("Authentication failed.", "clientId and clientSecret are both required.")
	}
	tok, err := a.issuer.Authenticate(clientID, secret, a.service, remoteAddr)
	var throttled *token.ThrottledError
	var busy *token.BusyError
	switch {
	case err == nil:
		noteClient(ctx, clientID)
		return tok, nil
	case errors.As(err, &throttled):
		return token.Token{}, rpcerr.Throttled(throttled.RetryAfter)
	case errors.As(err, &busy): // Unavailable, which clients may retry
		secs, ri := rpcerr.Retry(busy.RetryAfter)
		return token.Token{}, rpcerr.New(codes.Unavailable, rpcerr.ExceptionAPI, "Service busy.",
			fmt.Sprintf("Too many logins are being checked; retry after %d seconds.", secs), ri)
	case errors.Is(err, token.ErrNotAuthenticated):
		return token.Token{}, rpcerr.NotAuthenticated("Authentication failed.", "The client id or client secret is incorrect.")
	case errors.Is(err, token.ErrPermissionDenied):
		return token.Token{}, rpcerr.PermissionDenied("Permission denied: the client lacks permission for this service.",
			fmt.Sprintf("The client has no permission on the %s service.", a.service))
	default:
		a.log.ErrorContext(ctx, "issue token", "request_id", reqinfo.ID(ctx), "error", err)
		return token.Token{}, rpcerr.Internal()
	}
}

// TokenService is the gRPC way to a token: a token is for the service that issued it.
func (a *Authorizer) TokenService() authv1.TokenServiceServer { return tokenService{a: a} }

type tokenService struct {
	authv1.UnimplementedTokenServiceServer
	a *Authorizer
}

func (t tokenService) IssueToken(ctx context.Context, req *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
	tok, err := t.a.Login(ctx, req.GetClientId(), req.GetClientSecret(), callerAddress(ctx, t.a.trusted))
	if err != nil {
		return nil, err
	}
	return &authv1.IssueTokenResponse{AccessToken: tok.AccessToken, ExpiresIn: int32(tok.ExpiresIn)}, nil
}
