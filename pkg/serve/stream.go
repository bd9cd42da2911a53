package serve

import (
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// streamInterceptor guards the streaming methods (health watch, reflection): same rules, no body.
func (s *Server) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	ctx, start := ss.Context(), time.Now()
	call := grpcCallFrom(ctx)
	s.markLogged(call) // this function logs and counts it, not the sweep of ended calls
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in stream handler", "route", info.FullMethod, "panic", p, "stack", string(debug.Stack()))
			err = rpcerr.Internal()
		}
		md, _ := metadata.FromIncomingContext(ctx)
		s.logGRPCCall(ctx, md, info.FullMethod, authz.ClientID(ctx), err, time.Since(start))
	}()
	if !tapAuthorized(ctx, call, info.FullMethod) {
		if _, err := s.authz.Authorize(ctx, s.routes.ByMethod[info.FullMethod], authz.BearerFromMetadata(ctx)); err != nil {
			return err
		}
	}
	guarded, stop := s.guardStream(ss, info)
	defer stop()
	return handler(srv, guarded)
}
