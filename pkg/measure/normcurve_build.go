package measure

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// minCurveStep is what a grade's median is raised to above the one before when the sample's
// medians do not increase (units): the format needs a strictly increasing norm curve.
const minCurveStep = 1

// BuildNormCurve is a framework's norm curve (grades.csv's norm column, grades 0–12) from a
// norming sample's measures of that framework, by this rule:
//
//  1. each grade's median is the median of its MOY measures (the curve is the median at
//     mid-year), or, for a grade without MOY measures, of its BOY and EOY measures together;
//  2. walking up the grades that have a median, one not above the grade before it with a median
//     is raised to that median + 1 unit, so the medians increase strictly;
//  3. a grade without measures between two with medians gets the straight line between them, and
//     one below the lowest or above the highest the straight continuation of the nearest two
//     (the norm curve's own rule beyond its ends, METHOD §4);
//  4. every median is rounded to 0.01 units (still strictly increasing: steps are ≥ 1 unit apart
//     before interpolation, and interpolated ones split such a step evenly).
//
// At least two grades need measures; the result has Grades entries.
func BuildNormCurve(sample []NormSample, framework string) ([]float64, error) {
	moy, other := map[int][]float64{}, map[int][]float64{}
	for _, s := range sample {
		if s.Framework != framework {
			continue
		}
		if s.TimeOfYear == "MOY" {
			moy[s.Grade] = append(moy[s.Grade], s.Measure)
		} else {
			other[s.Grade] = append(other[s.Grade], s.Measure)
		}
	}
	var grades []int
	medians := map[int]float64{}
	for g := 0; g < Grades; g++ {
		ms := moy[g]
		if len(ms) == 0 {
			ms = other[g]
		}
		if len(ms) == 0 {
			continue
		}
		medians[g] = median(ms)
		grades = append(grades, g)
	}
	if len(grades) < 2 {
		return nil, fmt.Errorf("norm curve of %s: measures at %d grades; want at least 2 to draw a curve through", framework, len(grades))
	}
	for i := 1; i < len(grades); i++ {
		if prev := medians[grades[i-1]]; medians[grades[i]] <= prev {
			medians[grades[i]] = prev + minCurveStep
		}
	}
	curve := make([]float64, Grades)
	for g := 0; g < Grades; g++ {
		// The two grades with medians whose line gives g: around it, else the nearest two.
		i := sort.SearchInts(grades, g)
		switch {
		case i < len(grades) && grades[i] == g:
			curve[g] = medians[g]
			continue
		case i == 0:
			i = 1
		case i == len(grades):
			i = len(grades) - 1
		}
		g0, g1 := grades[i-1], grades[i]
		slope := (medians[g1] - medians[g0]) / float64(g1-g0)
		curve[g] = medians[g0] + slope*float64(g-g0)
	}
	for g := range curve {
		curve[g] = math.Round(curve[g]*100) / 100
	}
	return curve, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
