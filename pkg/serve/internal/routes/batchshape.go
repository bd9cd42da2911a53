package routes

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/yardstick-dev/yardstick/proto/yardstick"
	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// BatchShape is what the frame's handler knows of any service's batch rpc: the record is {id, oneof
// request {a field per unary rpc}}, the answer {id, oneof answer {a field per response, and error}}.
type BatchShape struct {
	Rec, Ans   protoreflect.MessageType
	RecID      protoreflect.FieldDescriptor
	AnsID      protoreflect.FieldDescriptor
	Request    protoreflect.OneofDescriptor
	Methods    map[protoreflect.FieldNumber]string                    // request field → the rpc's full method
	Answers    map[protoreflect.FullName]protoreflect.FieldDescriptor // response type → answer field
	ErrField   protoreflect.FieldDescriptor
	FieldNames string // the request fields, for the error of a record without one
}

// ReadBatch reads the shape of the batch rpc full ("/pkg.Service/Method") from the contract and
// checks it at start-up: every rpc a record may name has its record field and answer field.
func ReadBatch(full string) (*BatchShape, error) {
	sd, md, err := method(full)
	if err != nil {
		return nil, fmt.Errorf("batch rpc %s: %w", full, err)
	}
	sh := &BatchShape{Methods: map[protoreflect.FieldNumber]string{}, Answers: map[protoreflect.FullName]protoreflect.FieldDescriptor{}}
	for _, step := range []func(protoreflect.ServiceDescriptor, protoreflect.MethodDescriptor) error{sh.readEnvelope, sh.readAnswers, sh.readRequests} {
		if err := step(sd, md); err != nil {
			return nil, fmt.Errorf("batch rpc %s: %w", full, err)
		}
	}
	return sh, nil
}

// method finds the bidirectional stream full and its service in the contract.
func method(full string) (protoreflect.ServiceDescriptor, protoreflect.MethodDescriptor, error) {
	svcName, name, ok := strings.Cut(strings.TrimPrefix(full, "/"), "/")
	if !ok {
		return nil, nil, fmt.Errorf("not /service/method")
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svcName).Append(protoreflect.Name(name)))
	if err != nil {
		return nil, nil, err
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	if !ok || !md.IsStreamingClient() || !md.IsStreamingServer() {
		return nil, nil, fmt.Errorf("not a bidirectional stream of a service")
	}
	return md.Parent().(protoreflect.ServiceDescriptor), md, nil
}

// readEnvelope reads the record's and the answer's types and their ids.
func (sh *BatchShape) readEnvelope(_ protoreflect.ServiceDescriptor, md protoreflect.MethodDescriptor) error {
	var err error
	if sh.Rec, err = protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName()); err != nil {
		return err
	}
	if sh.Ans, err = protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName()); err != nil {
		return err
	}
	rd, ad := md.Input(), md.Output()
	sh.RecID, sh.AnsID, sh.Request = rd.Fields().ByName("id"), ad.Fields().ByName("id"), rd.Oneofs().ByName("request")
	if !isString(sh.RecID) || !isString(sh.AnsID) || sh.Request == nil || ad.Oneofs().ByName("answer") == nil {
		return fmt.Errorf("the record must be {string id, oneof request} and the answer {string id, oneof answer}")
	}
	return nil
}

func isString(f protoreflect.FieldDescriptor) bool {
	return f != nil && f.Kind() == protoreflect.StringKind && !f.IsList()
}

// readAnswers reads the answer's fields: one per response type, and error.
func (sh *BatchShape) readAnswers(_ protoreflect.ServiceDescriptor, md protoreflect.MethodDescriptor) error {
	answer := md.Output().Oneofs().ByName("answer")
	status := (&batchv1.Status{}).ProtoReflect().Descriptor().FullName()
	for i := range answer.Fields().Len() {
		f := answer.Fields().Get(i)
		switch {
		case f.Message() == nil:
			return fmt.Errorf("answer field %s is not a message", f.Name())
		case f.Name() == "error" && f.Message().FullName() == status:
			sh.ErrField = f
		default:
			sh.Answers[f.Message().FullName()] = f
		}
	}
	if sh.ErrField == nil {
		return fmt.Errorf("the answer has no field error of type %s", status)
	}
	return nil
}

// readRequests reads the record's request fields: one per rpc a record may name, and no other.
func (sh *BatchShape) readRequests(sd protoreflect.ServiceDescriptor, _ protoreflect.MethodDescriptor) error {
	for i := range sd.Methods().Len() {
		m := sd.Methods().Get(i)
		if !recordable(m) {
			continue
		}
		name := yardstick.RecordField(string(m.Name()))
		f := sh.Request.Fields().ByName(protoreflect.Name(name))
		if f == nil || f.Message() == nil || f.Message().FullName() != m.Input().FullName() {
			return fmt.Errorf("the record has no field %s of type %s for rpc %s", name, m.Input().FullName(), m.Name())
		}
		if sh.Answers[m.Output().FullName()] == nil {
			return fmt.Errorf("the answer has no field for %s, rpc %s's response", m.Output().FullName(), m.Name())
		}
		sh.Methods[f.Number()] = "/" + string(sd.FullName()) + "/" + string(m.Name())
	}
	var names []string
	for i := range sh.Request.Fields().Len() {
		f := sh.Request.Fields().Get(i)
		if sh.Methods[f.Number()] == "" {
			return fmt.Errorf("record field %s names no rpc of the service that a record may name (option yardstick.batch.v1.record)", f.Name())
		}
		names = append(names, string(f.Name()))
	}
	sh.FieldNames = strings.Join(names, ", ")
	return nil
}
