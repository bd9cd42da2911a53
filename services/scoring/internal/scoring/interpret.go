package scoring

import (
	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// extras are the opt-in parts of an answer (docs/method.md §12): a percentile from the norms
// for a grade and time of year. The zero value asks for nothing, so the answer is exactly the
// original one.
type extras struct {
	graded bool // grade and timeOfYear given: grade display cap and percentile
	grade  int
	norms  measure.Norms
}

// percentileAsked checks the optional grade and timeOfYear of a scoring path without strands:
// neither asks for nothing; both ask for a percentile, which needs the bundle's norms for the
// framework (a 400 naming grade where there are none). fw may be nil when the request's other
// problems leave the framework unknown.
func percentileAsked(p *serve.Problems, b *measure.Bundle, fw *measure.Framework, grade *int32, timeOfYear *string) extras {
	if grade == nil && timeOfYear == nil {
		return extras{}
	}
	before := p.Len()
	g, toy := gradeAndTime(p, grade, timeOfYear)
	if p.Len() > before || fw == nil {
		return extras{}
	}
	n, ok := b.Norms(fw.Name, g, toy)
	if !ok {
		p.Add("grade", "the content bundle has no %s norms for grade %d %s, so no percentile can be given", fw.Name, g, toy)
		return extras{}
	}
	return extras{graded: true, grade: g, norms: n}
}

// apply adds what x asks for to a measure answer.
func apply(fw *measure.Framework, est measure.Estimate, x extras, m *scoringv1.Measure) {
	if x.graded {
		m.AbilityDisplay = fw.DisplayGrade(est.Ability, x.grade)
		pc := int32(x.norms.Rank(est.Ability))
		m.Percentile = &pc
	}
}
