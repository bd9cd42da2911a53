package servetest

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/proto/yardstick"
	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// The gRPC batch streams' differential test (each service's batch rpc): the same generated
// requests as the NDJSON batch's, as records of the batch rpc, each answered exactly as a unary
// gRPC call of its rpc.

// GRPCRecord is one record of a gRPC batch: the rpc it names and its request.
type GRPCRecord struct {
	Method  string // full method
	Request proto.Message
}

// GRPCRecords turns reqs into gRPC records: each body decoded by protojson into its path's
// request type. A body protojson refuses (a wrong JSON type, an unknown field: a JSON matter)
// and a path that is not a unary path of the contract are left out.
func GRPCRecords(t testing.TB, reqs []Request) []GRPCRecord {
	t.Helper()
	routes, err := yardstick.Routes()
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]string{}
	for _, r := range routes {
		byPath[r.Path] = r.FullMethod
	}
	var out []GRPCRecord
	for _, q := range reqs {
		full, ok := byPath[q.Path]
		if !ok || q.Path == "/authToken" {
			continue
		}
		svc, _, _ := strings.Cut(strings.TrimPrefix(full, "/"), "/")
		if _, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc)); err != nil {
			continue // the other service's: not in this binary, and no rpc of this one
		}
		md := methodDescriptor(t, full)
		mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
		if err != nil {
			t.Fatal(err)
		}
		m := mt.New().Interface()
		if protojson.Unmarshal(q.Body, m) != nil {
			continue
		}
		out = append(out, GRPCRecord{Method: full, Request: m})
	}
	return out
}

func methodDescriptor(t testing.TB, full string) protoreflect.MethodDescriptor {
	t.Helper()
	svc, name, _ := strings.Cut(strings.TrimPrefix(full, "/"), "/")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		t.Fatal(err)
	}
	md := d.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(name))
	if md == nil {
		t.Fatalf("no method %s", full)
	}
	return md
}

// RecordOf is rec as a record of the batch rpc batchMethod, with id: its request in the field
// named for its rpc (nil Method: a record with no request).
func RecordOf(t testing.TB, batchMethod, id string, rec GRPCRecord) proto.Message {
	t.Helper()
	md := methodDescriptor(t, batchMethod)
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
	if err != nil {
		t.Fatal(err)
	}
	m := mt.New()
	m.Set(md.Input().Fields().ByName("id"), protoreflect.ValueOfString(id))
	if rec.Method != "" {
		_, name, _ := strings.Cut(strings.TrimPrefix(rec.Method, "/"), "/")
		f := md.Input().Fields().ByName(protoreflect.Name(yardstick.RecordField(name)))
		if f == nil {
			t.Fatalf("%s has no field for %s", md.Input().FullName(), name)
		}
		m.Set(f, protoreflect.ValueOfMessage(rec.Request.ProtoReflect()))
	}
	return m.Interface()
}

// GRPCBatch sends records over the batch rpc batchMethod with ctx's metadata, reading the
// answers as it writes (as a client must), and returns the answers, the trailer and the
// stream's status.
func (s *Server) GRPCBatch(ctx context.Context, batchMethod string, records []proto.Message) ([]proto.Message, metadata.MD, error) {
	md := methodDescriptor(s.t, batchMethod)
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	st, err := s.Conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, batchMethod)
	if err != nil {
		return nil, nil, err
	}
	sendErr := make(chan error, 1)
	go func() {
		for _, r := range records {
			if err := st.SendMsg(r); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- st.CloseSend()
	}()
	var answers []proto.Message
	for {
		a := mt.New().Interface()
		err := st.RecvMsg(a)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			cancel()
			<-sendErr
			return answers, st.Trailer(), err
		}
		answers = append(answers, a)
		if len(answers) > len(records) {
			s.t.Fatalf("more answers than records")
		}
	}
	return answers, st.Trailer(), <-sendErr
}

// CheckGRPCBatchDifferential sends recs as one gRPC batch (ids "r0", "r1", ...) and checks that
// every record is answered as a unary gRPC call of its rpc with the same token: the response
// (proto.Equal) or the status (code, message, details), in order with its id; that the trailer
// counts them; and that the mix means something (a quarter OK, a tenth INVALID_ARGUMENT).
func (s *Server) CheckGRPCBatchDifferential(t *testing.T, batchMethod string, recs []GRPCRecord) {
	t.Helper()
	ctx := s.Authed(context.Background())
	n := len(recs)
	records := make([]proto.Message, n)
	for i, r := range recs {
		records[i] = RecordOf(t, batchMethod, "r"+strconv.Itoa(i), r)
	}
	answers, trailer, err := s.GRPCBatch(ctx, batchMethod, records)
	if err != nil {
		t.Fatalf("batch: %v (after %d answers)", err, len(answers))
	}
	if len(answers) != n {
		t.Fatalf("%d answers for %d records", len(answers), n)
	}
	codesSeen, ok, failures := map[codes.Code]int{}, 0, 0
	for i, a := range answers {
		want, wantErr := s.unaryGRPC(ctx, recs[i])
		id, got, gotErr := AnswerOf(a)
		if id != "r"+strconv.Itoa(i) {
			t.Fatalf("answer %d has id %q", i, id)
		}
		same := status.Code(gotErr) == status.Code(wantErr)
		if wantErr != nil {
			same = same && SameStatus(gotErr, wantErr)
		} else {
			same = same && proto.Equal(got, want)
		}
		if !same {
			t.Errorf("record %d %s %v:\nbatch %v %v\nunary %v %v", i, recs[i].Method, recs[i].Request, got, statusText(gotErr), want, statusText(wantErr))
			if failures++; failures > 20 {
				t.FailNow()
			}
		}
		codesSeen[status.Code(gotErr)]++
		if gotErr == nil {
			ok++
		}
	}
	for k, want := range map[string]int{serve.TrailerRecords: n, serve.TrailerOK: ok, serve.TrailerFailed: n - ok} {
		if v := trailer.Get(k); len(v) != 1 || v[0] != strconv.Itoa(want) {
			t.Errorf("trailer %s = %v; want %d", k, v, want)
		}
	}
	t.Logf("%d records: codes %v", n, codesSeen)
	if codesSeen[codes.OK] < n/4 || codesSeen[codes.InvalidArgument] < n/10 {
		t.Errorf("the mix is not varied enough: %v", codesSeen)
	}
}

// unaryGRPC is rec's answer as a unary gRPC call.
func (s *Server) unaryGRPC(ctx context.Context, rec GRPCRecord) (proto.Message, error) {
	md := methodDescriptor(s.t, rec.Method)
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		s.t.Fatal(err)
	}
	resp := mt.New().Interface()
	if err := s.Conn.Invoke(ctx, rec.Method, rec.Request, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// AnswerOf reads a batch answer: its id, and its response or its error as a status error.
func AnswerOf(a proto.Message) (id string, resp proto.Message, err error) {
	m := a.ProtoReflect()
	d := m.Descriptor()
	id = m.Get(d.Fields().ByName("id")).String()
	f := m.WhichOneof(d.Oneofs().ByName("answer"))
	if f == nil {
		return id, nil, errors.New("the answer holds nothing")
	}
	v := m.Get(f).Message()
	if f.Name() == "error" {
		code := v.Get(v.Descriptor().Fields().ByName("code")).Int()
		msg := v.Get(v.Descriptor().Fields().ByName("message")).String()
		p := status.New(codes.Code(code), msg).Proto()
		details := v.Get(v.Descriptor().Fields().ByName("details")).List()
		for i := range details.Len() {
			p.Details = append(p.Details, proto.Clone(details.Get(i).Message().Interface()).(*anypb.Any))
		}
		return id, nil, status.FromProto(p).Err()
	}
	return id, v.Interface(), nil
}

// statusText is err's status with its details, for a failure message.
func statusText(err error) string {
	if err == nil {
		return "OK"
	}
	return protojson.Format(status.Convert(err).Proto())
}

// SameStatus reports whether two errors are the same status: code, message and details, each
// detail compared unpacked (a detail's bytes vary with the order its maps were written in).
func SameStatus(a, b error) bool {
	pa, pb := status.Convert(a).Proto(), status.Convert(b).Proto()
	if pa.GetCode() != pb.GetCode() || pa.GetMessage() != pb.GetMessage() || len(pa.GetDetails()) != len(pb.GetDetails()) {
		return false
	}
	for i, da := range pa.GetDetails() {
		ma, errA := da.UnmarshalNew()
		mb, errB := pb.GetDetails()[i].UnmarshalNew()
		if errA != nil || errB != nil || !proto.Equal(ma, mb) {
			return false
		}
	}
	return true
}

// RecordError is a batch answer's error (yardstick.batch.v1.Status) as the status error it
// stands for.
func RecordError(s *batchv1.Status) error {
	return status.ErrorProto(&spb.Status{Code: s.GetCode(), Message: s.GetMessage(), Details: s.GetDetails()})
}

// HasViolation reports whether err's google.rpc.BadRequest has a violation of the field at path
// (gRPC keys each by its full path: "cutLevels[1]").
func HasViolation(err error, path string) bool {
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				if v.GetField() == path {
					return true
				}
			}
		}
	}
	return false
}
