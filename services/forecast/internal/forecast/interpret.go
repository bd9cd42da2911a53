package forecast

import (
	"context"
	"fmt"
	"math"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// graded is the opt-in percentile of a forecast (docs/method.md §12): with grade and timeOfYear
// the forecast ability gets a percentile from the bundle's norms and the grade's display cap.
type graded struct {
	asked bool
	grade int
	norms measure.Norms
}

// percentileAsked checks the optional grade and timeOfYear: neither asks for nothing, one needs
// the other, and the bundle must have norms for the framework, grade and time of year (else a
// 400 naming grade).
func percentileAsked(p *rpcerr.Problems, b *measure.Bundle, framework string, grade *int32, timeOfYear *string) graded {
	if grade == nil && timeOfYear == nil {
		return graded{}
	}
	ok := true
	switch {
	case grade == nil:
		p.Add("grade", "is required with timeOfYear (0 for Kindergarten to 12)")
		ok = false
	case *grade < 0 || *grade > 12:
		p.Add("grade", "must be between 0 (Kindergarten) and 12, got %d", *grade)
		ok = false
	}
	toy := ""
	switch {
	case timeOfYear == nil:
		p.Add("timeOfYear", "is required with grade (BOY, MOY or EOY)")
		ok = false
	default:
		var known bool
		if toy, known = measure.TimeOfYear(*timeOfYear); !known {
			p.Add("timeOfYear", "must be BOY, MOY or EOY, got %q", *timeOfYear)
			ok = false
		}
	}
	if !ok || framework == "" { // no framework: its absence is the request's problem already
		return graded{}
	}
	n, found := b.Norms(framework, int(*grade), toy)
	if !found {
		p.Add("grade", "the content bundle has no %s norms for grade %d %s, so no percentile can be given", framework, *grade, toy)
		return graded{}
	}
	return graded{asked: true, grade: int(*grade), norms: n}
}

// display is the ability shown, capped at the grade's cap when a grade was given.
func (g graded) display(fw *measure.Framework, ability float64) string {
	if g.asked {
		return fw.DisplayGrade(ability, g.grade)
	}
	return fw.Display(ability)
}

// percentile is the rank of ability, nil when none was asked.
func (g graded) percentile(ability float64) *int32 {
	if !g.asked {
		return nil
	}
	pc := int32(g.norms.Rank(ability))
	return &pc
}

func (s *Server) ForecastComprehension(ctx context.Context, req *forecastv1.ComprehensionRequest) (*forecastv1.ComprehensionResponse, error) {
	var p rpcerr.Problems
	fw := requiredFramework(&p, s.content.Bundle(), req.Framework)
	switch v := req.ReaderAbility; {
	case v == nil:
		p.Add("readerAbility", "is required")
	case !measure.Finite(*v) || math.Abs(*v) > measure.MaxAbsMeasure:
		p.Add("readerAbility", "must be a number between %d and %d, got %v", -measure.MaxAbsMeasure, measure.MaxAbsMeasure, *v)
	}
	texts := req.GetTextMeasures()
	switch {
	case len(texts) == 0:
		p.Add("textMeasures", "must hold at least one text measure")
	case len(texts) > s.limits.MaxItems:
		p.Add("textMeasures", "holds %d measures; the limit is %d", len(texts), s.limits.MaxItems)
		texts = nil
	}
	for i, d := range texts {
		if !measure.Finite(d) || math.Abs(d) > measure.MaxAbsMeasure {
			p.Add(fmt.Sprintf("textMeasures[%d]", i), "must be a number between %d and %d, got %v", -measure.MaxAbsMeasure, measure.MaxAbsMeasure, d)
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	rates := fw.ComprehensionRates(req.GetReaderAbility(), texts)
	if !measure.Finite(rates...) {
		return nil, rpcerr.Fault(ctx, s.log, "comprehension rates are not finite", fmt.Errorf("%s reader %v", fw.Name, req.GetReaderAbility()))
	}
	return &forecastv1.ComprehensionResponse{Rates: rates, Framework: fw.Name, ApiVersion: serve.Version}, nil
}
