package scoring

import (
	"context"

	"github.com/yardstick-dev/yardstick/pkg/serve"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// ListFrameworks lists what the bundle in force offers per framework: its scale, its subject,
// its content and which optional parts (norm curve, benchmarks, norms) requests may use.
func (c *Catalog) ListFrameworks(ctx context.Context, _ *scoringv1.ListFrameworksRequest) (*scoringv1.ListFrameworksResponse, error) {
	b := bundleOf(ctx, c.content)
	out := &scoringv1.ListFrameworksResponse{Bundle: c.bundleInfo(b), ApiVersion: serve.Version}
	for _, o := range b.Offers() {
		f, _ := b.Framework(o.Framework)
		out.Frameworks = append(out.Frameworks, &scoringv1.FrameworkOffer{
			Name: o.Framework, Subject: o.Subject, Label: f.Label, NegativePrefix: f.NegativePrefix,
			UnitsPerLogit: f.UnitsPerLogit, SuccessAtMatch: f.SuccessAtMatch, DisplayMin: f.DisplayMin, DisplayMax: f.DisplayMax,
			Items: int32(o.Items), PartialCreditItems: int32(o.Polytomous), Strands: int32(o.Strands),
			Forms: int32(o.Forms), Links: int32(o.Links), NormCurve: o.NormCurve, Benchmarks: o.Benchmarks, NormsTables: int32(o.Norms),
		})
	}
	return out, nil
}
