package scoring

import (
	"context"
	"errors"
	"fmt"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// extras are the opt-in parts of an answer (docs/method.md §12): a percentile from the norms
// for a grade and time of year, and person fit. The zero value asks for nothing, so the answer
// is exactly the original one.
type extras struct {
	graded  bool // grade and timeOfYear given: grade display cap and percentile
	grade   int
	norms   measure.Norms
	fit     bool
	answers []measure.Answer // the answers fit is judged on
}

// percentileAsked checks the optional grade and timeOfYear of a scoring path without strands:
// neither asks for nothing; both ask for a percentile, which needs the bundle's norms for the
// framework (a 400 naming grade where there are none). fw may be nil when the request's other
// problems leave the framework unknown.
func percentileAsked(p *rpcerr.Problems, b *measure.Bundle, fw *measure.Framework, grade *int32, timeOfYear *string) extras {
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

// withFit adds the person-fit request of an item-result path.
func (x extras) withFit(asked *bool, answers []measure.Answer) extras {
	if asked != nil && *asked {
		x.fit, x.answers = true, answers
	}
	return x
}

// Why a zero or perfect score has no fit (fit_note). The answer leaves fit out rather than
// writing it null: the JSON encoder leaves out an unset proto3-optional field, and writing null
// would have needed a dynamic value (google.protobuf.Value) that takes the slow encoder for every
// answer of these paths.
const (
	noFitPerfect = "no fit for a perfect score: all answers right agree with any ability beyond the items, so there is no pattern to judge"
	noFitZero    = "no fit for a zero score: all answers wrong agree with any ability beyond the items, so there is no pattern to judge"
	// The same for answers with a polytomous item among them, whose extremes are every item at
	// its maximum score or at 0.
	noFitPerfectPoints = "no fit for a perfect score: every item at its maximum score agrees with any ability beyond the items, so there is no pattern to judge"
	noFitZeroPoints    = "no fit for a zero score: every item at 0 agrees with any ability beyond the items, so there is no pattern to judge"
)

// personFit is the fit of the answers at ability (the unrounded estimate the answer reports), or
// for a zero or perfect score no fit and a note saying why.
func (s *Server) personFit(ctx context.Context, fw *measure.Framework, ability float64, answers []measure.Answer) (*scoringv1.PersonFit, *string, error) {
	pf, err := fw.PersonFit(ability, answers)
	if errors.Is(err, measure.ErrExtremeScore) {
		note := extremeNote(answers)
		return nil, &note, nil
	}
	if err == nil && !measure.Finite(pf.Infit, pf.Outfit, pf.InfitZ, pf.OutfitZ) {
		err = fmt.Errorf("figures are not finite: %+v", pf)
	}
	if err != nil {
		return nil, nil, rpcerr.Fault(ctx, s.log, "person fit", err)
	}
	return &scoringv1.PersonFit{Infit: pf.Infit, Outfit: pf.Outfit, InfitZ: pf.InfitZ, OutfitZ: pf.OutfitZ, Flag: pf.Flag}, nil, nil
}

// extremeNote says why answers with a zero or perfect score have no fit.
func extremeNote(answers []measure.Answer) string {
	poly := false
	for _, a := range answers {
		poly = poly || a.Item.Polytomous()
	}
	zero := answers[0].Points() == 0
	switch {
	case poly && zero:
		return noFitZeroPoints
	case poly:
		return noFitPerfectPoints
	case zero:
		return noFitZero
	}
	return noFitPerfect
}

// apply adds what x asks for to a measure answer: the display and percentile of the reported
// estimate rep, the fit at the estimated ability.
func (s *Server) apply(ctx context.Context, fw *measure.Framework, rep measure.Estimate, ability float64, x extras, m *scoringv1.Measure) error {
	if x.graded {
		m.AbilityDisplay = fw.DisplayGrade(rep.Ability, x.grade)
		pc := int32(x.norms.Rank(rep.Ability))
		m.Percentile = &pc
	}
	if x.fit {
		var err error
		if m.Fit, m.FitNote, err = s.personFit(ctx, fw, ability, x.answers); err != nil {
			return err
		}
	}
	return nil
}
