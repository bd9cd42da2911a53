package httpfront

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// Every problem of a request comes in one answer: the decoder finds values of the wrong type, the
// handler values out of range and fields missing. When the decoder's problems are all of fields,
// the message holds every other field as sent (lists keep their indexes), so the handler runs on
// it too.

// FieldsOnly reports whether err is a decoding error whose problems are each a field's: the body
// was one JSON object, read to its end.
func FieldsOnly(err error) bool {
	var wire *jsoncodec.Error
	if !errors.As(err, &wire) || len(wire.Problems) == 0 {
		return false
	}
	for _, p := range wire.Problems {
		if p.Path == "" {
			return false
		}
	}
	return true
}

// WithFieldProblems is the answer of a call whose body had the field problems decodeErr and whose
// handler answered err: the decoder's problems, then the handler's of other fields. The handler's
// problems of a field the decoder found wrong ("is required") and across fields ("", which may
// rest on a field it did not get) are left out, as is any other error: the request was invalid.
func WithFieldProblems(decodeErr, err error) error {
	var wire *jsoncodec.Error
	errors.As(decodeErr, &wire)
	all := slices.Clone(wire.Problems)
	if st, ok := status.FromError(err); ok && st.Code() == codes.InvalidArgument {
		for _, d := range st.Details() {
			bad, _ := d.(*errdetails.BadRequest) // nil for other details: no violations
			for _, v := range bad.GetFieldViolations() {
				if v.GetField() != "" && !covered(v.GetField(), wire.Problems) {
					all = append(all, jsoncodec.Problem{Path: v.GetField(), Message: v.GetDescription()})
				}
			}
		}
	}
	// In the body's order, as either alone lists them: items[0] before items[2], whoever found it.
	slices.SortStableFunc(all, func(a, b jsoncodec.Problem) int { return comparePaths(a.Path, b.Path) })
	var p rpcerr.Problems
	for _, pr := range all {
		p.Add(pr.Path, "%s", pr.Message)
	}
	p.Dropped(wire.Dropped)
	return p.Err()
}

// comparePaths orders element paths with their indexes as numbers (items[2] before items[10]);
// a problem of the whole request ("") comes last.
func comparePaths(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:da])
			nb, _ := strconv.Atoi(b[:db])
			if na != nb {
				return cmp.Compare(na, nb)
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' && n < 9 {
		n++
	}
	return n
}

// covered reports whether a problem of field is about a value the decoder found wrong: the field
// itself or a part of it.
func covered(field string, problems []jsoncodec.Problem) bool {
	for _, p := range problems {
		if field == p.Path || strings.HasPrefix(field, p.Path+".") || strings.HasPrefix(field, p.Path+"[") {
			return true
		}
	}
	return false
}
