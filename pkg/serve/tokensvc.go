package serve

import (
	"context"

	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// tokenService is the gRPC door to a token, served by both services: a token is for the service
// that issued it. It shares login (authtoken.go) with POST /authToken, so both doors answer
// alike.
type tokenService struct {
	authv1.UnimplementedTokenServiceServer
	s *Server
}

func (t tokenService) IssueToken(ctx context.Context, req *authv1.IssueTokenRequest) (*authv1.IssueTokenResponse, error) {
	tok, err := t.s.login(ctx, req.GetClientId(), req.GetClientSecret(), remoteAddress(ctx, t.s.cfg.TrustedProxies))
	if err != nil {
		return nil, err
	}
	return &authv1.IssueTokenResponse{AccessToken: tok.AccessToken, ExpiresIn: int32(tok.ExpiresIn)}, nil
}
