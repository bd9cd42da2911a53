package scoring

import (
	"context"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
)

// programsOf is the set of content programs the request's client sees: the programs the clients
// file in force gave it when its token was verified for this request (a batch record's, when the
// stream's token was). A call without a verified client sees shared content only.
func programsOf(ctx context.Context) measure.Programs {
	claims, ok := serve.ClaimsFrom(ctx)
	if !ok {
		return measure.Programs{}
	}
	return measure.ProgramSet(claims.Programs...)
}

// bundleOf is what a request is answered from, taken once at its start: the bundle in force as
// its client sees it, every other program's content absent from it (measure.Bundle.View), so
// that hidden content is answered exactly as content that never existed, on every path.
func bundleOf(ctx context.Context, content *measure.Live) *measure.Bundle {
	return content.Bundle().View(programsOf(ctx))
}
