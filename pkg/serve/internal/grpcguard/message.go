package grpcguard

import (
	"context"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// checkReceived reports what is wrong with msg, the message just read: not valid protobuf, or
// over its method's limit (from the codec's record of its size). The interceptors call it before a
// handler sees the message. It returns the codec's record; without one, the message is smaller than
// anything the budget counts on its method (size 0 says so) and holds no unknown field.
func (g *Guard) checkReceived(method string, msg any) (received, error) {
	r, ok := g.codec.take(msg)
	if !ok {
		return received{}, nil
	}
	if r.refused != nil {
		return r, r.refused
	}
	if rt := g.routes.ByMethod[method]; rt != nil && r.size > rt.MessageLimit {
		r.free()
		return r, tooLarge(r.size, rt.MessageLimit)
	}
	return r, nil
}

// Receive is the chain's step for a direct call's message: its size against the method's limit,
// the budget's admission of its decoding, the decoding itself (a large message was kept as bytes
// until now), and no unknown fields. The read was admitted before gRPC read it (read.go); now the
// decoding is, at its real size. release gives the admission back once the call is answered.
func (g *Guard) Receive(ctx context.Context, method string, req any) (release func(), err error) {
	got, err := g.checkReceived(method, req) // malformed or over the method's limit
	if err != nil {
		return nil, err
	}
	adm, err := g.budget.AdmitDecode(ctx, authz.ClientID(ctx), g.isGroup(method), got.size)
	if err != nil {
		got.free()
		return nil, err
	}
	g.codec.decodeRaw(&got, req)
	if call := callFrom(ctx); call != nil {
		call.read.Done() // the message is decoded: its bytes are gone
	}
	if got.refused != nil {
		adm.Release()
		return nil, got.refused
	}
	if got.general { // the fast decoders refuse unknown fields: only protobuf-go keeps them
		var p rpcerr.Problems
		if g.unknownFields(&p, req); p.Len() > 0 {
			adm.Release()
			return nil, p.Err()
		}
	}
	return adm.Release, nil
}

// isGroup reports whether method is a group forecast's rpc (the budget costs those per student).
func (g *Guard) isGroup(method string) bool {
	r := g.routes.ByMethod[method]
	return r != nil && r.Group
}
