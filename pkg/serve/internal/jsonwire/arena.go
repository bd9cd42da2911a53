package jsonwire

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire/layout"
)

// useLayout makes p fast when layout verified md's generated struct and every message it holds is
// fast too; otherwise p stays on the protoreflect path.
func useLayout(p *plan, md protoreflect.MessageDescriptor) {
	st := layout.Of(md)
	if st == nil {
		return
	}
	for i, f := range p.fields {
		f.offset, f.kind = st.Fields[i].Offset, st.Fields[i].Kind
		if (f.kind == layout.Message || f.kind == layout.Messages) && (f.sub == nil || !f.sub.fast) {
			return
		}
	}
	p.fast, p.st = true, st
	maxNum := 0
	for _, f := range p.fields {
		maxNum = max(maxNum, int(f.fd.Number()))
	}
	if maxNum <= 1024 {
		p.byNumber = make([]*fieldPlan, maxNum+1)
		for _, f := range p.fields {
			p.byNumber[f.fd.Number()] = f
		}
	}
}

// arena hands out pointers to values of T from chunks that are never moved, so a request's
// optional scalars cost one allocation per chunk instead of one each.
type arena[T any] struct{ chunk []T }

func (a *arena[T]) put(v T) *T {
	if len(a.chunk) == cap(a.chunk) {
		a.chunk = make([]T, 0, min(max(2*cap(a.chunk), 16), 1<<14))
	}
	a.chunk = append(a.chunk, v)
	return &a.chunk[len(a.chunk)-1]
}
