package forecast

import (
	"context"
	"fmt"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// The group forecast streams (POST /api/forecast/{reading,math}/group/stream, docs/api.md): the
// unary group, one student a line, in constant memory. The settings line is the unary group's
// request without its students, validated as the unary group validates it; each student line is
// decoded and validated as one entry of the unary group's studentData, and answered with its
// entry of the unary answer, encoded as the unary answer encodes it; the last line is the unary
// answer's group for the valid students. measure.GroupAccumulator gives the unary Group's
// numbers bit for bit (Group is built on it).

// groupStreams are the service's group streams by path.
func (s *Server) groupStreams() map[string]serve.OpenGroup {
	return map[string]serve.OpenGroup{
		"/api/forecast/reading/group/stream": s.openGroup(measure.SubjectReading),
		"/api/forecast/math/group/stream":    s.openGroup(measure.SubjectMath),
	}
}

// openGroup opens a group stream of a subject's framework from its settings line.
func (s *Server) openGroup(subject string) serve.OpenGroup {
	return func(ctx context.Context, settings []byte) (serve.GroupStream, error) {
		if settings == nil {
			return nil, rpcerr.Invalid("", "the body is empty: its first line must be the group's settings {testUncertainty, cutLevels}")
		}
		var req forecastv1.GroupForecastRequest
		fieldErr, err := s.wire.UnmarshalFields(settings, &req)
		if err != nil {
			return nil, err
		}
		var p rpcerr.Problems
		if len(req.GetStudentData()) > 0 {
			p.Add("studentData", "is not part of the settings line: send one student a line after it")
		}
		if fieldErr != nil { // every problem of the line at once, as the unary group answers them
			_, err := s.startGroup(subject, &p, &req)
			return nil, serve.WithFieldProblems(fieldErr, err)
		}
		return s.startGroup(subject, &p, &req)
	}
}

// startGroup validates a group stream's settings (req without its students; p may hold problems
// already) as the unary group validates them, and starts the group.
// A subject of "" is one the settings did not name well (already in p): its framework is not
// looked up.
func (s *Server) startGroup(subject string, p *rpcerr.Problems, req *forecastv1.GroupForecastRequest) (*groupStream, error) {
	b := s.content.Bundle()
	testSD := s.testUncertainty(p, req.TestUncertainty)
	cuts := s.cutLevels(p, req.GetCutLevels())
	var fw *measure.Framework
	if subject != "" {
		fw = subjectFramework(p, b, subject)
	}
	gr := percentileAsked(p, b, name(fw), req.Grade, req.TimeOfYear)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return &groupStream{s: s, fw: fw, gr: gr, acc: fw.NewGroupAccumulator(testSD, cuts)}, nil
}

// groupStream is one group in progress.
type groupStream struct {
	s     *Server
	fw    *measure.Framework
	gr    graded
	acc   *measure.GroupAccumulator
	entry forecastv1.StudentForecast // reused: encoded at once
	req   forecastv1.GroupForecastRequest
	buf   []byte
}

// Entry validates one student line (an object or [priorAbility, priorUncertainty,
// elapsedDays]) as the one entry of a unary group's studentData, adds it and returns its entry;
// an invalid line's error is what that unary group would answer (studentData[0]. problems).
func (g *groupStream) Entry(_ context.Context, line []byte) ([]byte, error) {
	// Decoded as the only student of a unary group's studentData, so that both forms are read by
	// the same rules and a problem is answered as that group would answer it.
	g.buf = append(append(append(g.buf[:0], `{"studentData":[`...), line...), "]}"...)
	g.req.Reset()
	fieldErr, err := g.s.wire.UnmarshalFields(g.buf, &g.req)
	if err != nil {
		return nil, err
	}
	var p rpcerr.Problems
	if n := len(g.req.GetStudentData()); n != 1 {
		p.Add("", "a student line holds one student, an object or [priorAbility, priorUncertainty, elapsedDays]; this one holds %d", n)
		if fieldErr != nil {
			return nil, serve.WithFieldProblems(fieldErr, p.Err())
		}
		return nil, p.Err()
	}
	if fieldErr != nil { // every problem of the line at once, as the unary group answers them
		return nil, serve.WithFieldProblems(fieldErr, check(g.req.GetStudentData()[0]))
	}
	if err := g.add(g.req.GetStudentData()[0], &g.entry); err != nil {
		return nil, err
	}
	return g.s.wire.Marshal(&g.entry)
}

// check validates one student as the only entry of a unary group's studentData.
func check(d *forecastv1.StudentData) error {
	var p rpcerr.Problems
	measure.CheckPrior(p.Add, "studentData[0].", d.PriorAbility, d.PriorUncertainty, d.ElapsedDays)
	return p.Err()
}

// add validates one student as the only entry of a unary group's studentData, adds it to the
// group and sets sf to its entry of the unary answer; an invalid student's error is what that
// unary group would answer, and it is left out.
func (g *groupStream) add(d *forecastv1.StudentData, sf *forecastv1.StudentForecast) error {
	if err := check(d); err != nil {
		return err
	}
	f := g.acc.Add(measure.Student{
		Prior:       measure.Normal{Mean: d.GetPriorAbility(), SD: d.GetPriorUncertainty()},
		ElapsedDays: d.GetElapsedDays(),
	})
	rep := measure.Reported(measure.Estimate{Ability: f.Ability, Uncertainty: f.Uncertainty})
	sf.Ability, sf.AbilityDisplay, sf.Uncertainty, sf.Probabilities, sf.Percentile = rep.Ability, g.fw.Display(rep.Ability), rep.Uncertainty, f.Probabilities, nil
	if g.gr.asked {
		sf.AbilityDisplay, sf.Percentile = g.gr.display(g.fw, rep.Ability), g.gr.percentile(rep.Ability)
	}
	return nil
}

// Group is the unary answer's forecasts.group for the students added.
func (g *groupStream) Group(ctx context.Context) ([]byte, error) {
	a, err := g.aggregate(ctx)
	if err != nil {
		return nil, err
	}
	return g.s.wire.Marshal(a)
}

// aggregate is the unary answer's forecasts.group for the students added.
func (g *groupStream) aggregate(ctx context.Context) (*forecastv1.GroupAggregate, error) {
	r := g.acc.Result()
	if !measure.Finite(append(append([]float64{r.Ability, r.Uncertainty}, r.Proportions...), r.StdErrs...)...) {
		return nil, rpcerr.Fault(ctx, g.s.log, "group forecast is not finite", fmt.Errorf("ability %v uncertainty %v", r.Ability, r.Uncertainty))
	}
	rep := measure.Reported(measure.Estimate{Ability: r.Ability, Uncertainty: r.Uncertainty})
	return &forecastv1.GroupAggregate{
		GroupAbility:            rep.Ability,
		GroupUncertainty:        rep.Uncertainty,
		GroupProportionPerLevel: r.Proportions,
		GroupStderrPerLevel:     r.StdErrs,
	}, nil
}
