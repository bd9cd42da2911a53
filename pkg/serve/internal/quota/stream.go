package quota

import (
	"context"
	"time"

	"google.golang.org/grpc"
)

type paceKey struct{}

// pacer is a stream's hold on its client's rate, in the stream's context: every record and
// student the stream reads calls Pace.
type pacer struct {
	l      *Limiter
	client string
}

// OpenStream admits a stream of the client whose token ctx carries: a slot of its concurrency
// (refused at once, 429, when none is free: out.Err), and, on the context returned, the pacer
// its records and students call (Pace). The stream's rate is spent by its records, not by its
// opening; out.Policy is the RateLimit-Policy of a client with a rate (no RateLimit: that
// would cost a decision the opening does not take). out.Done ends the slot.
func (l *Limiter) OpenStream(ctx context.Context) (_ context.Context, out Outcome) {
	client := l.cfg.Client(ctx)
	if client == "" {
		return ctx, out
	}
	p, rated, conc := l.limitsOf(client)
	if rated {
		out.Policy = policyHeader(p)
	}
	if out.slot, out.Err = l.acquire(client, p, conc); out.Err != nil {
		return ctx, out
	}
	return context.WithValue(ctx, paceKey{}, &pacer{l: l, client: client}), out
}

// Pace takes one of the stream's client's requests, waiting while its rate is spent (never
// refusing: a stream slows down); its error is ctx's when the stream ends while it waits. A
// context without a stream's pacer passes at once.
func Pace(ctx context.Context) error {
	p, _ := ctx.Value(paceKey{}).(*pacer)
	if p == nil {
		return nil
	}
	for first := true; ; first = false {
		pol, rated, _ := p.l.limitsOf(p.client) // read each time: a reload applies mid-stream
		if !rated {
			return nil
		}
		d := p.l.take(p.client, pol)
		if d.allowed {
			return nil
		}
		if first {
			p.l.metrics.throttled(p.client, ReasonStream) // a record slowed counts once
		}
		select {
		case <-time.After(d.wait):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// StreamInterceptor is OpenStream and Pace for the gRPC streams: inside the guard's stream
// interceptor (the token is verified and in the stream's context), each message the handler
// receives is paced. Streams without a client (health, reflection) pass through.
func (l *Limiter) StreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, out := l.OpenStream(ss.Context())
	if out.Err != nil {
		return out.Err
	}
	defer out.Done()
	if ctx == ss.Context() {
		return handler(srv, ss)
	}
	if out.Policy != "" {
		_ = ss.SetHeader(map[string][]string{policyMD: {out.Policy}})
	}
	return handler(srv, &pacedStream{ServerStream: ss, ctx: ctx})
}

// pacedStream paces each message received.
type pacedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *pacedStream) Context() context.Context { return s.ctx }

// RecvMsg paces a message once it is received, so the end of the stream (io.EOF) spends
// nothing and waits for nothing.
func (s *pacedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return Pace(s.ctx)
}
