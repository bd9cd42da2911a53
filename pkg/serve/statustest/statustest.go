// Package statustest compares gRPC statuses as a caller sees them, for the tests of the batch
// streams on both sides of pkg/serve: the frame's own and the services' (through servetest).
package statustest

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// Same reports whether two errors are the same status: code, message and details, each
// detail compared unpacked (a detail's bytes vary with the order its maps were written in).
func Same(a, b error) bool {
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
