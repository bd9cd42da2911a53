package measure

import (
	"fmt"
	"io"
	"slices"
	"sort"
)

// Building growth norms from a cohort's longitudinal measures (§15): the reading of the measures
// file, the models to fit per framework, and their report.

// GrowthMeasure is one row of a growth measures file: a student's measure in a window.
type GrowthMeasure struct {
	Framework, Student string
	Window             Window
	Measure            float64
}

var growthMeasuresHeader = []string{"framework", "student", "grade", "time_of_year", "measure"}

// ReadGrowthMeasures reads a growth measures file: the header
// framework,student,grade,time_of_year,measure and one row per student and window, in any order.
// A framework not in frameworks, a grade or time of year out of range, a measure that is not a
// finite number and a second row for a student's window are errors naming the line (up to 50,
// joined); on any problem nothing is returned.
func ReadGrowthMeasures(r io.Reader, name string, frameworks []string) ([]GrowthMeasure, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var p problems
	var out []GrowthMeasure
	type seenKey struct {
		framework, student string
		w                  Window
	}
	seen := map[seenKey]int{}
	for _, row := range readTable(&p, name, data, growthMeasuresHeader) {
		fw, fok := p.text(row, "framework")
		if fok && !slices.Contains(frameworks, fw) {
			p.at(row, "unknown framework %q; want one of %v", fw, frameworks)
			fok = false
		}
		st, sok := p.text(row, "student")
		g, gok := p.grade(row, "grade")
		tod, tok := p.timeOfYear(row)
		m, mok := p.number(row, "measure")
		if !fok || !sok || !gok || !tok || !mok {
			continue
		}
		k := seenKey{fw, st, Window{g, tod}}
		if line, dup := seen[k]; dup {
			p.at(row, "student %q has a second %s measure in %s (first at line %d)", st, fw, k.w, line)
			continue
		}
		seen[k] = row.line
		out = append(out, GrowthMeasure{Framework: fw, Student: st, Window: k.w, Measure: m})
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no measures", name)
	}
	return out, nil
}

// GrowthReport is the report of a growth norms build: the models fitted and those skipped.
type GrowthReport struct {
	Models  []GrowthReportModel `json:"models"`
	Skipped []GrowthSkipped     `json:"skipped"`
}

// ReportWindow is a window in the report.
type ReportWindow struct {
	Grade      int    `json:"grade"`
	TimeOfYear string `json:"timeOfYear"`
}

// GrowthReportModel is one fitted model in the report.
type GrowthReportModel struct {
	Framework    string         `json:"framework"`
	Current      ReportWindow   `json:"current"`
	Priors       []ReportWindow `json:"priors"` // older first
	N            int            `json:"n"`
	Knots        [][]float64    `json:"knots"`      // per prior
	Boundaries   [][]float64    `json:"boundaries"` // per prior
	Lowest       float64        `json:"lowest"`
	Highest      float64        `json:"highest"`
	Coefficients [][]float64    `json:"coefficients"` // τ_1 … τ_100, in the design's column order
	Loss         []float64      `json:"loss"`         // the check loss of each τ
}

// GrowthSkipped is a model the data asked for but that was not fitted.
type GrowthSkipped struct {
	Framework string         `json:"framework"`
	Current   ReportWindow   `json:"current"`
	Priors    []ReportWindow `json:"priors"`
	N         int            `json:"n"`
	Reason    string         `json:"reason"`
}

func reportWindows(ws []Window) []ReportWindow {
	out := make([]ReportWindow, len(ws))
	for k, w := range ws {
		out[k] = ReportWindow{w.Grade, w.TimeOfYear}
	}
	return out
}

// GrowthProgress is called as a build goes: before a model is fitted (Done = 0) and after each
// of its τ (Done = 1 … 100).
type GrowthProgress func(model string, n, done int)

// BuildGrowthNorms fits the growth models of §15 on measures: per framework, the windows present
// in time order w1 < w2 < …, and for each j a model w(j−1) → w(j) and a model (w(j−2), w(j−1)) →
// w(j), each from the students with a measure in all its windows, fitted when there are at least
// minStudents of them and reported as skipped otherwise (or when its design is degenerate).
func BuildGrowthNorms(measures []GrowthMeasure, minStudents int, progress GrowthProgress) (*GrowthReport, []*GrowthModel, error) {
	if minStudents < 1 {
		return nil, nil, fmt.Errorf("build growth norms: minimum students %d; want at least 1", minStudents)
	}
	// byFramework[fw][student][window] = measure
	byFramework := map[string]map[string]map[Window]float64{}
	windows := map[string]map[Window]bool{}
	for _, m := range measures {
		if byFramework[m.Framework] == nil {
			byFramework[m.Framework] = map[string]map[Window]float64{}
			windows[m.Framework] = map[Window]bool{}
		}
		st := byFramework[m.Framework][m.Student]
		if st == nil {
			st = map[Window]float64{}
			byFramework[m.Framework][m.Student] = st
		}
		st[m.Window] = m.Measure
		windows[m.Framework][m.Window] = true
	}
	rep := &GrowthReport{Models: []GrowthReportModel{}, Skipped: []GrowthSkipped{}}
	var models []*GrowthModel
	for _, fw := range sortedKeys(byFramework) {
		ws := make([]Window, 0, len(windows[fw]))
		for w := range windows[fw] {
			ws = append(ws, w)
		}
		sort.Slice(ws, func(a, b int) bool { return ws[a].Before(ws[b]) })
		students := sortedKeys(byFramework[fw])
		for j := 1; j < len(ws); j++ {
			for order := 1; order <= 2 && order <= j; order++ {
				m := &GrowthModel{Framework: fw, Current: ws[j], Priors: slices.Clone(ws[j-order : j])}
				fit, n, reason := fitCohort(m, students, byFramework[fw], minStudents, progress)
				if fit == nil {
					rep.Skipped = append(rep.Skipped, GrowthSkipped{Framework: fw, Current: ReportWindow{m.Current.Grade, m.Current.TimeOfYear},
						Priors: reportWindows(m.Priors), N: n, Reason: reason})
					continue
				}
				models = append(models, fit.Model)
				rep.Models = append(rep.Models, reportModel(fit))
			}
		}
	}
	return rep, models, nil
}

// fitCohort gathers a model's cohort (students in their sorted order) and fits it; without a fit
// it returns the reason.
func fitCohort(m *GrowthModel, students []string, data map[string]map[Window]float64, minStudents int, progress GrowthProgress) (*GrowthFit, int, string) {
	priors := make([][]float64, len(m.Priors))
	var current []float64
	for _, s := range students {
		st := data[s]
		c, ok := st[m.Current]
		for _, w := range m.Priors {
			_, has := st[w]
			ok = ok && has
		}
		if !ok {
			continue
		}
		for k, w := range m.Priors {
			priors[k] = append(priors[k], st[w])
		}
		current = append(current, c)
	}
	n := len(current)
	if n < minStudents {
		return nil, n, fmt.Sprintf("%d students have all its windows; fewer than the minimum %d", n, minStudents)
	}
	name := fmt.Sprintf("%s %s from %s", m.Framework, m.Current, formatWindows(m.Priors))
	var tick func()
	if progress != nil {
		progress(name, n, 0)
		done := 0
		tick = func() { done++; progress(name, n, done) }
	}
	fit, err := FitGrowth(priors, current, tick)
	if err != nil {
		return nil, n, err.Error()
	}
	fit.Model.Framework, fit.Model.Current, fit.Model.Priors = m.Framework, m.Current, m.Priors
	return fit, n, ""
}

func reportModel(fit *GrowthFit) GrowthReportModel {
	m := fit.Model
	r := GrowthReportModel{Framework: m.Framework, Current: ReportWindow{m.Current.Grade, m.Current.TimeOfYear},
		Priors: reportWindows(m.Priors), N: fit.N, Lowest: m.Lowest, Highest: m.Highest,
		Coefficients: m.Coefficients, Loss: fit.Loss}
	for _, s := range m.Splines {
		r.Knots = append(r.Knots, slices.Clone(s.Knots[:]))
		r.Boundaries = append(r.Boundaries, slices.Clone(s.Boundaries[:]))
	}
	return r
}
