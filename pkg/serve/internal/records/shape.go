// Package records reads a batch rpc's record and answer messages from the contract (issue 21's
// gRPC batch streams: ScoringService.ScoreBatch, ForecastService.ForecastBatch), and checks at
// start-up that a record can name every unary rpc of the service and its answer hold every
// response: the frame's handler (pkg/serve, grpcbatch.go) then works on any service's batch rpc
// by that shape alone.
package records

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// Shape is what the frame knows of a batch rpc's messages: the record is {id, oneof request
// {one field per unary rpc, named for it}}, the answer {id, oneof answer {one field per response
// type, and error (yardstick.batch.v1.Status)}}.
type Shape struct {
	Rec, Ans   protoreflect.MessageType
	RecID      protoreflect.FieldDescriptor
	AnsID      protoreflect.FieldDescriptor
	Request    protoreflect.OneofDescriptor
	Methods    map[protoreflect.FieldNumber]string                    // request field → the rpc's full method
	Answers    map[protoreflect.FullName]protoreflect.FieldDescriptor // response type → answer field
	ErrField   protoreflect.FieldDescriptor
	FieldNames string // the request fields, for the error of a record without one
}

// Read reads the shape of the batch rpc full ("/pkg.Service/Method") from the contract,
// and checks that the record has a field for every unary rpc of the service and the answer one
// for each of their response types: a record the frame could not run is found at start-up.
func Read(full string) (*Shape, error) {
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
	sh := &Shape{Methods: map[protoreflect.FieldNumber]string{}, Answers: map[protoreflect.FullName]protoreflect.FieldDescriptor{}}
	if sh.Rec, err = protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName()); err != nil {
		return nil, fmt.Errorf("batch rpc %s: %w", full, err)
	}
	if sh.Ans, err = protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName()); err != nil {
		return nil, fmt.Errorf("batch rpc %s: %w", full, err)
	}
	rd, ad := md.Input(), md.Output()
	sh.RecID, sh.AnsID, sh.Request = rd.Fields().ByName("id"), ad.Fields().ByName("id"), rd.Oneofs().ByName("request")
	answer := ad.Oneofs().ByName("answer")
	if sh.RecID == nil || sh.AnsID == nil || sh.RecID.Kind() != protoreflect.StringKind || sh.AnsID.Kind() != protoreflect.StringKind || sh.Request == nil || answer == nil {
		return nil, fmt.Errorf("batch rpc %s: the record must be {string id, oneof request} and the answer {string id, oneof answer}", full)
	}
	for i := range answer.Fields().Len() {
		f := answer.Fields().Get(i)
		if f.Message() == nil {
			return nil, fmt.Errorf("batch rpc %s: answer field %s is not a message", full, f.Name())
		}
		if f.Name() == "error" && f.Message().FullName() == (&batchv1.Status{}).ProtoReflect().Descriptor().FullName() {
			sh.ErrField = f
			continue
		}
		sh.Answers[f.Message().FullName()] = f
	}
	if sh.ErrField == nil {
		return nil, fmt.Errorf("batch rpc %s: the answer has no field error of type yardstick.batch.v1.Status", full)
	}
	var names []string
	for i := range sh.Request.Fields().Len() {
		f := sh.Request.Fields().Get(i)
		m := sd.Methods().ByName(protoreflect.Name(camel(string(f.Name()))))
		if m == nil || m.IsStreamingClient() || m.IsStreamingServer() || f.Message() == nil || f.Message().FullName() != m.Input().FullName() {
			return nil, fmt.Errorf("batch rpc %s: record field %s names no unary rpc of the service taking its type", full, f.Name())
		}
		sh.Methods[f.Number()] = "/" + svcName + "/" + string(m.Name())
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
		if sh.Answers[m.Output().FullName()] == nil {
			return nil, fmt.Errorf("batch rpc %s: the answer has no field for %s, rpc %s's response", full, m.Output().FullName(), m.Name())
		}
	}
	sh.FieldNames = strings.Join(names, ", ")
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

// Field is the field of a batch record that holds a request of the rpc named name (the
// method's name, ScoreItemIds): score_item_ids.
func Field(name string) string { return snake(name) }

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

// Registrar registers the services on Srv with Serve in place of the handler of the batch rpc
// Full (the service's own is its Unimplemented stub).
type Registrar struct {
	Srv   grpc.ServiceRegistrar
	Full  string
	Serve grpc.StreamHandler
}

func (r Registrar) RegisterService(desc *grpc.ServiceDesc, impl any) {
	d := *desc
	d.Streams = slices.Clone(desc.Streams)
	for i := range d.Streams {
		if "/"+desc.ServiceName+"/"+d.Streams[i].StreamName == r.Full {
			d.Streams[i].Handler = r.Serve
		}
	}
	r.Srv.RegisterService(&d, impl)
}
