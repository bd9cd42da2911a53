package serve

import (
	"context"
	"errors"
	"fmt"

	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// tokenService is POST /authToken, served by both services: a token is for the service that
// issued it.
type tokenService struct {
	authv1.UnimplementedTokenServiceServer
	s *Server
}

func (t tokenService) IssueToken(ctx context.Context, req *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
	var p Problems
	if req.GetClientId() == "" {
		p.Add("clientId", "is required")
	}
	if req.GetClientSecret() == "" {
		p.Add("clientSecret", "is required")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	s := t.s
	tok, err := s.issuer.Authenticate(req.GetClientId(), req.GetClientSecret(), s.cfg.Service, remoteAddress(ctx, s.cfg.TrustedProxies))
	var throttled *token.ThrottledError
	switch {
	case err == nil:
		noteClient(ctx, req.GetClientId())
		return &authv1.IssueTokenResponse{AccessToken: tok.AccessToken, ExpiresIn: int32(tok.ExpiresIn)}, nil
	case errors.As(err, &throttled):
		return nil, Throttled(throttled.RetryAfter)
	case errors.Is(err, token.ErrNotAuthenticated):
		return nil, NotAuthenticated("Authentication failed.", "The client id or client secret is incorrect.")
	case errors.Is(err, token.ErrPermissionDenied):
		return nil, PermissionDenied("Permission denied: the client lacks permission for this service.",
			fmt.Sprintf("The client has no permission on the %s service.", s.cfg.Service))
	default:
		s.log.ErrorContext(ctx, "issue token", "request_id", RequestID(ctx), "error", err)
		return nil, Internal()
	}
}
