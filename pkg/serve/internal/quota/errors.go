package quota

import (
	"fmt"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// Reasons of a throttled call, the reason label of yardstick_client_throttled_total.
const (
	ReasonRate        = "rate"        // a unary call over the client's rate: answered 429
	ReasonConcurrency = "concurrency" // a call over the client's calls in progress: answered 429
	ReasonStream      = "stream"      // a stream's record or student waited for the rate (never refused)
)

// throttled is the answer to a refused call: 429 Throttled with Retry-After in whole seconds,
// at least 1; gRPC RESOURCE_EXHAUSTED with RetryInfo of the same delay.
func throttled(p policy, wait time.Duration, reason string, concurrency int) error {
	secs := max(ceilSeconds(wait), 1)
	msg, info := "Too many requests.", fmt.Sprintf("This client may make %s requests a second (burst %d); retry after %d seconds.",
		strconv.FormatFloat(p.rate, 'g', -1, 64), p.burst, secs)
	if reason == ReasonConcurrency {
		msg, info = "Too many requests in progress.", fmt.Sprintf("This client may have %d requests in progress at once; retry after %d seconds.",
			concurrency, secs)
	}
	return rpcerr.New(codes.ResourceExhausted, rpcerr.ExceptionThrottled, msg, info,
		&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(secs) * time.Second)})
}
