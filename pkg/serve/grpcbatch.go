package serve

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/httpfront"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// The gRPC batch stream (ScoringService.ScoreBatch, ForecastService.ForecastBatch: issue 21),
// served by the frame, not the service: the guard authorizes and admits the stream and logs it
// (grpcguard.StreamInterceptor), internal/batch's Ordered keeps the answers in order and the
// records in flight bounded, and each record runs here as a unary call of its rpc, in-process
// through the chain, with the stream's token: its permission, its handler, its status. The
// record and answer messages are read from the contract by shape (recordShape), so a service
// declares only the rpc (Service.BatchRPC).

// recordShape is what the frame knows of a batch rpc's messages: the record is {id, oneof request
// {one field per unary rpc, named for it}}, the answer {id, oneof answer {one field per response
// type, and error (yardstick.batch.v1.Status)}}.
type recordShape struct {
	rec, ans   protoreflect.MessageType
	recID      protoreflect.FieldDescriptor
	ansID      protoreflect.FieldDescriptor
	request    protoreflect.OneofDescriptor
	methods    map[protoreflect.FieldNumber]string // request field → the rpc's full method
	answers    map[protoreflect.FullName]protoreflect.FieldDescriptor
	errField   protoreflect.FieldDescriptor
	fieldNames string // the request fields, for the error of a record without one
}

// newRecordShape reads the shape of the batch rpc full ("/pkg.Service/Method") from the contract,
// and checks that the record has a field for every unary rpc of the service and the answer one
// for each of their response types: a record the frame could not run is found at start-up.
func newRecordShape(full string) (*recordShape, error) {
	svcName, name, ok := strings.Cut(strings.TrimPrefix(full, "/"), "/")
	if !ok {
		return nil, fmt.Errorf("batch rpc %q is not /service/method", full)
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svcName))
	if err != nil {
		return nil, fmt.Errorf("batch rpc %s: %w", full, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("batch rpc %s: %s is not a service", full, svcName)
	}
	md := sd.Methods().ByName(protoreflect.Name(name))
	if md == nil || !md.IsStreamingClient() || !md.IsStreamingServer() {
		return nil, fmt.Errorf("batch rpc %s: not a bidirectional stream of the service", full)
	}
	sh := &recordShape{methods: map[protoreflect.FieldNumber]string{}, answers: map[protoreflect.FullName]protoreflect.FieldDescriptor{}}
	if sh.rec, err = protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName()); err != nil {
		return nil, fmt.Errorf("batch rpc %s: %w", full, err)
	}
	if sh.ans, err = protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName()); err != nil {
		return nil, fmt.Errorf("batch rpc %s: %w", full, err)
	}
	rd, ad := md.Input(), md.Output()
	sh.recID, sh.ansID, sh.request = rd.Fields().ByName("id"), ad.Fields().ByName("id"), rd.Oneofs().ByName("request")
	answer := ad.Oneofs().ByName("answer")
	if sh.recID == nil || sh.ansID == nil || sh.recID.Kind() != protoreflect.StringKind || sh.ansID.Kind() != protoreflect.StringKind || sh.request == nil || answer == nil {
		return nil, fmt.Errorf("batch rpc %s: the record must be {string id, oneof request} and the answer {string id, oneof answer}", full)
	}
	for i := range answer.Fields().Len() {
		f := answer.Fields().Get(i)
		if f.Message() == nil {
			return nil, fmt.Errorf("batch rpc %s: answer field %s is not a message", full, f.Name())
		}
		if f.Name() == "error" && f.Message().FullName() == (&batchv1.Status{}).ProtoReflect().Descriptor().FullName() {
			sh.errField = f
			continue
		}
		sh.answers[f.Message().FullName()] = f
	}
	if sh.errField == nil {
		return nil, fmt.Errorf("batch rpc %s: the answer has no field error of type yardstick.batch.v1.Status", full)
	}
	var names []string
	for i := range sh.request.Fields().Len() {
		f := sh.request.Fields().Get(i)
		m := sd.Methods().ByName(protoreflect.Name(camel(string(f.Name()))))
		if m == nil || m.IsStreamingClient() || m.IsStreamingServer() || f.Message() == nil || f.Message().FullName() != m.Input().FullName() {
			return nil, fmt.Errorf("batch rpc %s: record field %s names no unary rpc of the service taking its type", full, f.Name())
		}
		sh.methods[f.Number()] = "/" + svcName + "/" + string(m.Name())
		names = append(names, string(f.Name()))
	}
	for i := range sd.Methods().Len() {
		m := sd.Methods().Get(i)
		if m.IsStreamingClient() || m.IsStreamingServer() {
			continue
		}
		if !slices.Contains(names, snake(string(m.Name()))) {
			return nil, fmt.Errorf("batch rpc %s: the record has no field %s for rpc %s", full, snake(string(m.Name())), m.Name())
		}
		if sh.answers[m.Output().FullName()] == nil {
			return nil, fmt.Errorf("batch rpc %s: the answer has no field for %s, rpc %s's response", full, m.Output().FullName(), m.Name())
		}
	}
	sh.fieldNames = strings.Join(names, ", ")
	return sh, nil
}

// camel is a field name as its rpc's name: score_item_ids → ScoreItemIds.
func camel(s string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(s, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// RecordField is the field of a batch record that holds a request of the rpc named name (the
// method's name, ScoreItemIds): score_item_ids.
func RecordField(name string) string { return snake(name) }

// snake is an rpc's name as its record field: ScoreItemIds → score_item_ids.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// recordsRegistrar registers the services on srv with the frame's handler in place of the
// batch rpc's (the service's own is its Unimplemented stub).
type recordsRegistrar struct {
	srv   grpc.ServiceRegistrar
	full  string
	serve grpc.StreamHandler
}

func (r recordsRegistrar) RegisterService(desc *grpc.ServiceDesc, impl any) {
	d := *desc
	d.Streams = slices.Clone(desc.Streams)
	for i := range d.Streams {
		if "/"+desc.ServiceName+"/"+d.Streams[i].StreamName == r.full {
			d.Streams[i].Handler = r.serve
		}
	}
	r.srv.RegisterService(&d, impl)
}

// Trailers of a complete gRPC batch stream: its counts, as the NDJSON stream's summary line.
const (
	TrailerRecords = "yardstick-records"
	TrailerOK      = "yardstick-ok"
	TrailerFailed  = "yardstick-failed"
)

// serveRecords is the batch rpc's handler: the records of one stream, answered in order.
func (s *Server) serveRecords(sh *recordShape) grpc.StreamHandler {
	return func(_ any, ss grpc.ServerStream) error {
		ctx := ss.Context()
		claims, _ := authz.ClaimsFrom(ctx) // the guard authorized the stream: its claims are here
		st := &recordStream{s: s, sh: sh, claims: claims, adm: admission.StreamFrom(ctx), ri: reqinfo.From(ctx)}
		start := time.Now()
		var ok, failed int
		recv := func() (*record, error) {
			r := &record{m: sh.rec.New().Interface()}
			if err := ss.RecvMsg(r.m); err != nil {
				return nil, err
			}
			st.cost(r)
			return r, nil
		}
		weigh := func(r *record) int { return int(r.cost) }
		send := func(a proto.Message) error {
			if a.ProtoReflect().Has(sh.errField) {
				failed++
			} else {
				ok++
			}
			return ss.SendMsg(a)
		}
		_, err := batch.Ordered(ctx, recv, weigh, st.answer, send, batch.Options{Log: s.log})
		if st.ri != nil {
			st.ri.Stream = []slog.Attr{slog.Int("records", ok+failed), slog.Int("ok", ok), slog.Int("failed", failed),
				slog.Bool("complete", err == nil), slog.Float64("stream_ms", float64(time.Since(start).Microseconds())/1000)}
		}
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

// recordStream is one batch stream's state for its records.
type recordStream struct {
	s      *Server
	sh     *recordShape
	claims token.Claims
	adm    *admission.Stream
	ri     *reqinfo.Info
}

// record is one record read: its message, the rpc its request names (nil: none) and what it
// costs in memory while held and handled (the budget's cost of its request: 0 for a small one).
type record struct {
	m    proto.Message
	rpc  protoreflect.FieldDescriptor
	cost int64
}

// cost finds r's rpc and its cost, as the budget costs the same request on its own.
func (st *recordStream) cost(r *record) {
	m := r.m.ProtoReflect()
	if r.rpc = m.WhichOneof(st.sh.request); r.rpc == nil {
		return
	}
	rt := st.s.routes.ByMethod[st.sh.methods[r.rpc.Number()]]
	r.cost = st.s.budget.Cost(rt != nil && rt.Group, int64(proto.Size(m.Get(r.rpc).Message().Interface())), false)
}

// answer answers one record: its id, and its rpc's response or status.
func (st *recordStream) answer(ctx context.Context, rec *record) (ans proto.Message) {
	r := rec.m.ProtoReflect()
	a := st.sh.ans.New()
	a.Set(st.sh.ansID, r.Get(st.sh.recID))
	defer func() {
		if p := recover(); p != nil { // outside the chain's own recovery: the frame's fault
			st.s.log.ErrorContext(ctx, "batch record panicked", "request_id", reqinfo.ID(ctx), "panic", p)
			st.setError(a, rpcerr.Internal())
			ans = a.Interface()
		}
	}()
	resp, err := st.run(ctx, rec)
	var f protoreflect.FieldDescriptor
	if err == nil {
		if f = st.sh.answers[resp.ProtoReflect().Descriptor().FullName()]; f == nil {
			err = rpcerr.Internal() // a response the contract's answer has no field for: checked at start-up
		}
	}
	if err != nil {
		st.setError(a, err)
	} else {
		a.Set(f, protoreflect.ValueOfMessage(resp.ProtoReflect()))
	}
	return a.Interface()
}

// setError sets the answer's error to the status a unary call ending with err gets.
func (st *recordStream) setError(a protoreflect.Message, err error) {
	p := status.Convert(err).Proto()
	e := &batchv1.Status{Code: p.GetCode(), Message: p.GetMessage(), Details: p.GetDetails()}
	a.Set(st.sh.errField, protoreflect.ValueOfMessage(e.ProtoReflect()))
}

// run runs the record's request as a unary call of its rpc with the stream's token: the rpc's
// permission, the budget (waited for, never refused), then the chain and the handler, which
// find the call marked as one whose checks are done (httpfront.Call).
func (st *recordStream) run(ctx context.Context, rec *record) (proto.Message, error) {
	r, fd := rec.m.ProtoReflect(), rec.rpc
	if fd == nil {
		return nil, rpcerr.Invalid("request", "is required: set the request of one rpc (%s)", st.sh.fieldNames)
	}
	full := st.sh.methods[fd.Number()]
	s := st.s
	rt := s.routes.ByMethod[full]
	ri := &reqinfo.Info{Route: full}
	if st.ri != nil {
		ri.ID, ri.ClientID = st.ri.ID, st.ri.ClientID
	}
	ctx = reqinfo.With(ctx, ri)
	authorized, err := authz.Permit(ctx, rt, st.claims)
	if err != nil {
		return nil, err
	}
	req := r.Get(fd).Message().Interface()
	if st.adm != nil {
		grant, err := st.adm.AdmitRecord(ctx, rec.cost)
		if err != nil {
			return nil, err // the stream is over: this answer is never sent
		}
		defer grant.Release()
	}
	m, ok := s.recordMethods[full]
	if !ok {
		return nil, rpcerr.Internal()
	}
	ctx = httpfront.WithCall(authorized, s.unary, full)
	// The generated handler decodes into a message of its own and calls the interceptor with it:
	// the record's request goes to the chain instead (nothing to decode, nothing copied).
	resp, err := m.Handler(m.Impl, ctx, func(any) error { return nil },
		func(ctx context.Context, _ any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return s.unary(ctx, req, info, h)
		})
	if err != nil {
		return nil, err
	}
	msg, ok := resp.(proto.Message)
	if !ok {
		return nil, rpcerr.Internal()
	}
	return msg, nil
}
