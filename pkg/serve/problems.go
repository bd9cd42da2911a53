package serve

import (
	"context"
	"fmt"
	"log/slog"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Problems collects every validation problem of one request, each under the path of the field it
// concerns (`items[3].result`, `priorAbility`; "" for a rule across fields, which the JSON front
// reports under nonFieldErrors), so a caller learns everything wrong with a request in one answer.
type Problems struct {
	violations []*errdetails.BadRequest_FieldViolation
	dropped    int
}

// maxProblems bounds the error body: 100,000 bad students must not produce a 10 MB answer.
const maxProblems = 100

// Add records a problem of field.
func (p *Problems) Add(field, format string, args ...any) {
	if len(p.violations) >= maxProblems {
		p.dropped++
		return
	}
	p.violations = append(p.violations, &errdetails.BadRequest_FieldViolation{
		Field:       field,
		Description: fmt.Sprintf(format, args...),
	})
}

// Len is the number of problems found.
func (p *Problems) Len() int { return len(p.violations) + p.dropped }

// Err is nil when nothing was recorded, otherwise an InvalidArgument status with a
// google.rpc.BadRequest detail listing every problem; the JSON front turns it into a 400 body.
func (p *Problems) Err() error {
	if len(p.violations) == 0 {
		return nil
	}
	violations := p.violations
	if p.dropped > 0 {
		violations = append(violations[:len(violations):len(violations)], &errdetails.BadRequest_FieldViolation{
			Description: fmt.Sprintf("%d more problems not listed", p.dropped),
		})
	}
	st := status.New(codes.InvalidArgument, msgInvalid)
	withDetails, err := st.WithDetails(
		&errdetails.BadRequest{FieldViolations: violations},
		errorInfo(ExceptionValidation, infoValidation),
	)
	if err != nil {
		return st.Err()
	}
	return withDetails.Err()
}

// Invalid is a single-problem validation error.
func Invalid(field, format string, args ...any) error {
	var p Problems
	p.Add(field, format, args...)
	return p.Err()
}

// Fault turns an error the validation should have prevented into a logged internal error: the
// cause goes to the log with the request id, the caller gets the documented 500.
func Fault(ctx context.Context, log *slog.Logger, what string, err error) error {
	log.ErrorContext(ctx, what, "request_id", RequestID(ctx), "error", err)
	return Internal()
}
