package rpcerr

import (
	"google.golang.org/grpc/status"

	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// Record is err as the error of one answer of a gRPC batch or group stream: the status a unary
// call ending with err would get (code, message, details), as yardstick.batch.v1.Status.
func Record(err error) *batchv1.Status {
	p := status.Convert(err).Proto()
	return &batchv1.Status{Code: p.GetCode(), Message: p.GetMessage(), Details: p.GetDetails()}
}
