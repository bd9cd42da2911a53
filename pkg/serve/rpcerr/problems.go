package rpcerr

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// Problems collects every validation problem of one request, each under its field's path
// (`items[3].result`; "" for a rule across fields), so a caller learns them all in one answer.
type Problems struct {
	violations []*errdetails.BadRequest_FieldViolation
	dropped    int
}

// maxProblems bounds the error body: 100,000 bad list entries must not produce a 10 MB answer.
const maxProblems = 100

// Add records a problem of field. A %q-quoted string is the caller's input: only its first
// jsoncodec.MaxQuoted bytes are quoted, with a note of its length (a 1 MB item id must not come back
// whole). Non-UTF-8 text becomes U+FFFD: protobuf could not carry it, losing the validationErrors.
func (p *Problems) Add(field, format string, args ...any) {
	if len(p.violations) >= maxProblems {
		p.dropped++
		return
	}
	for i, a := range args {
		if s, ok := a.(string); ok && len(s) > jsoncodec.MaxQuoted {
			args = slices.Clone(args) // the caller's slice stays as it was
			args[i] = clippedText(s)
		}
	}
	p.violations = append(p.violations, &errdetails.BadRequest_FieldViolation{
		Field:       strings.ToValidUTF8(field, "\uFFFD"),
		Description: strings.ToValidUTF8(fmt.Sprintf(format, args...), "\uFFFD"),
	})
}

// clippedText is a long input string: %q clips it and adds the note; other verbs print it whole.
type clippedText string

func (c clippedText) Format(f fmt.State, verb rune) {
	if verb != 'q' {
		_, _ = fmt.Fprintf(f, fmt.FormatString(f, verb), string(c))
		return
	}
	shown, note := jsoncodec.Clip(string(c))
	_, _ = io.WriteString(f, strconv.Quote(shown)+note)
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
	return withDetails(codes.InvalidArgument, MsgInvalid, &errdetails.BadRequest{FieldViolations: violations},
		errorInfo(ExceptionValidation, InfoValidation))
}

// Dropped counts n more problems found and not listed (a decoder that stopped listing them).
func (p *Problems) Dropped(n int) { p.dropped += n }

// Invalid is a single-problem validation error.
func Invalid(field, format string, args ...any) error {
	var p Problems
	p.Add(field, format, args...)
	return p.Err()
}

// Fault turns an error the validation should have prevented into Internal, its cause logged with
// the request id.
func Fault(ctx context.Context, log *slog.Logger, what string, err error) error {
	log.ErrorContext(ctx, what, "request_id", reqinfo.ID(ctx), "error", err)
	return Internal()
}
