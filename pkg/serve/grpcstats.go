package serve

import (
	"context"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
)

// guardStats follows each direct gRPC call through gRPC's own events. Its context is the one
// the tap handle returned (grpc-go derives the stream's context from it, and hands the stream's
// context to every stats event), so it finds the call's grpcCall there.
//
//   - InPayload comes right after a message is read and decoded, before the handler: the size
//     read and the codec's note on the message go into the call for the interceptors.
//   - End comes once the call is over, whatever ended it: the read slot is given back, and a
//     call the unary interceptor did not log is logged and counted here.
type guardStats struct{ s *Server }

func (g guardStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (g guardStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (g guardStats) HandleConn(context.Context, stats.ConnStats) {}

func (g guardStats) HandleRPC(ctx context.Context, st stats.RPCStats) {
	c := grpcCallFrom(ctx)
	if c == nil {
		return
	}
	switch st := st.(type) {
	case *stats.InPayload:
		c.received = int64(st.Length)
		c.lastMsg = st.Payload
		c.refused = g.s.guard.codec.take(st.Payload)
	case *stats.End:
		// A unary call reads a second time into the same message to check that none follows;
		// whatever the codec noted then is forgotten here.
		_ = g.s.guard.codec.take(c.lastMsg)
		c.release()
		if !c.logged {
			clientID := ""
			if claims, ok := ClaimsFrom(ctx); ok {
				clientID = claims.ClientID
			}
			md, _ := metadata.FromIncomingContext(ctx)
			g.s.logGRPCCall(ctx, md, c.method, clientID, st.Error, st.EndTime.Sub(st.BeginTime))
		}
	}
}
