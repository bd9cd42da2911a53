package serve

import (
	"context"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/grpcguard"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// The gRPC batch stream (Service.BatchRPC), served by the frame: batch.Ordered keeps the answers
// in order and the records in flight bounded, and each record runs as a unary call of its rpc,
// in-process through the chain, with the stream's token. The record and answer messages are read
// from the contract by shape (routes.ReadBatch), so a service declares only the rpc.

// Trailers of a complete gRPC batch stream: its counts, as the NDJSON stream's summary line.
const (
	TrailerRecords = "yardstick-records"
	TrailerOK      = "yardstick-ok"
	TrailerFailed  = "yardstick-failed"
)

// serveRecords is the batch rpc's handler: the records of one stream, answered in order.
func (s *Server) serveRecords(sh *routes.BatchShape) grpc.StreamHandler {
	return func(_ any, ss grpc.ServerStream) error {
		ctx := ss.Context()
		st := &recordStream{s: s, sh: sh, bearer: authz.BearerFromMetadata(ctx), adm: grpcguard.Ticket(ctx).Stream(), ri: reqinfo.From(ctx)}
		start := time.Now()
		var ok, failed int
		recv := func() (*record, error) {
			r := &record{m: sh.Rec.New().Interface()}
			if err := ss.RecvMsg(r.m); err != nil {
				return nil, err
			}
			st.cost(r)
			var err error // the record's bytes, from the budget as they arrive
			if r.done, err = st.adm.Hold(ctx, int64(proto.Size(r.m))); err != nil {
				return nil, err
			}
			return r, nil
		}
		weigh := func(r *record) int { return int(r.cost) }
		send := func(a proto.Message) error {
			if a.ProtoReflect().Has(sh.ErrField) {
				failed++
			} else {
				ok++
			}
			return ss.SendMsg(a)
		}
		_, err := batch.Ordered(ctx, recv, weigh, st.answer, send, batch.Options{Log: s.log})
		st.ri.Stream = []slog.Attr{slog.Int("records", ok+failed), slog.Int("ok", ok), slog.Int("failed", failed),
			slog.Bool("complete", err == nil), slog.Float64("stream_ms", float64(time.Since(start).Microseconds())/1000)}
		if err != nil {
			if _, ok := status.FromError(err); ok {
				return err // a message the guard refused, as it would refuse a unary call's
			}
			return status.FromContextError(err).Err()
		}
		ss.SetTrailer(metadata.Pairs(TrailerRecords, strconv.Itoa(ok+failed), TrailerOK, strconv.Itoa(ok), TrailerFailed, strconv.Itoa(failed)))
		return nil
	}
}

type recordStream struct {
	s      *Server
	sh     *routes.BatchShape
	bearer string // the stream's token
	adm    *admission.Stream
	ri     *reqinfo.Info // the stream's, which the guard's stream interceptor set
}

// record is one record read: its message, the rpc its request names ("": none) and that request,
// and the budget's cost of its request (0 for a small one).
type record struct {
	m    proto.Message
	full string
	req  proto.Message
	cost int64
	done func() // gives back its bytes (admission.Stream.Hold), once answered
}

// cost finds r's rpc, its request and its cost, as the budget costs the same request on its own.
func (st *recordStream) cost(r *record) {
	m := r.m.ProtoReflect()
	fd := m.WhichOneof(st.sh.Request)
	if fd == nil {
		return
	}
	r.full, r.req = st.sh.Methods[fd.Number()], m.Get(fd).Message().Interface()
	r.cost = st.s.Cost(r.full, int64(proto.Size(r.req)), false)
}

// answer answers one record: its id, and its rpc's response or status.
func (st *recordStream) answer(ctx context.Context, rec *record) (ans proto.Message) {
	defer rec.done()
	r := rec.m.ProtoReflect()
	a := st.sh.Ans.New()
	a.Set(st.sh.AnsID, r.Get(st.sh.RecID))
	defer func() {
		if p := recover(); p != nil { // the one net of this batch.Ordered worker goroutine, the handler's too (the chain has none)
			st.s.log.ErrorContext(ctx, "batch record panicked", "request_id", reqinfo.ID(ctx), "panic", p, "stack", string(debug.Stack()))
			st.setError(a, rpcerr.Internal())
			ans = a.Interface()
		}
	}()
	resp, err := st.run(ctx, rec)
	if err != nil {
		st.setError(a, err)
		return a.Interface()
	}
	// The answer has a field for every response a record's rpc gives (routes.ReadBatch checked).
	a.Set(st.sh.Answers[resp.ProtoReflect().Descriptor().FullName()], protoreflect.ValueOfMessage(resp.ProtoReflect()))
	return a.Interface()
}

// setError sets the answer's error to the status a unary call ending with err gets.
func (st *recordStream) setError(a protoreflect.Message, err error) {
	a.Set(st.sh.ErrField, protoreflect.ValueOfMessage(rpcerr.Record(err).ProtoReflect()))
}

// run runs the record's request as a unary call of its rpc: the gate admits it as a record of the
// stream (the stream's token against the clients as they are now: 401 once expired or its client
// gone, 403 for a permission taken away), then the in-process channel calls the rpc by name with
// the record's ticket.
func (st *recordStream) run(ctx context.Context, rec *record) (proto.Message, error) {
	if rec.req == nil {
		return nil, rpcerr.Invalid("request", "is required: set the request of one rpc (%s)", st.sh.FieldNames)
	}
	ctx = reqinfo.With(ctx, &reqinfo.Info{Route: rec.full, ID: st.ri.ID, ClientID: st.ri.ClientID})
	ctx, t, err := st.s.gate.Admit(ctx, gate.Call{Route: st.s.routes.ByMethod[rec.full], Bearer: st.bearer, Front: "grpc", Record: st.adm, Cost: rec.cost}, nil)
	if err != nil {
		return nil, err // a refusal of the token, or the stream is over (this answer is never sent)
	}
	defer t.Release()
	resp, err := st.s.channel.Call(ctx, t, rec.full, rec.req)
	if err != nil {
		return nil, err
	}
	return resp.(proto.Message), nil // a generated handler's response: a message of the rpc's type
}
