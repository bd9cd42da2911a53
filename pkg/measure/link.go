package measure

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Link kinds.
const (
	LinkLinear = "linear" // measure = Slope·score + Intercept on [Min, Max]
	LinkPoints = "points" // linear interpolation between monotone (score, measure) points
)

// LinkPoint is one point of a point table.
type LinkPoint struct{ Score, Measure float64 }

// Link maps an external test's scale score to a measure (§5).
type Link struct {
	ID, Framework    string
	Min, Max         float64 // valid scaleScore range (for a point table: its first and last score)
	Kind             string  // LinkLinear or LinkPoints
	Slope, Intercept float64 // LinkLinear
	Points           []LinkPoint
	LinkingError     float64 // e, measure units
	Program          string  // the program that owns it; "" for shared content
}

// RangeError is the error for a scale score outside a link table's range.
type RangeError struct{ Score, Min, Max float64 }

func (e *RangeError) Error() string {
	return fmt.Sprintf("scaleScore %s is outside the link table's range [%s, %s]", num(e.Score), num(e.Min), num(e.Max))
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Measure converts a scale score and its standard error of measurement (§5): x = L(score) with
// local slope a = dL/dscore, returned as Normal{x, u}, u = √((a·sem)² + e²). On a point table the
// slope at an interior point is the mean of its two segments' slopes. A score outside [Min, Max]
// returns a *RangeError.
func (l *Link) Measure(score, sem float64) (Normal, error) {
	if !finite(score) {
		return Normal{}, fmt.Errorf("scaleScore %v is not a finite number", score)
	}
	if !finite(sem) || sem < 0 {
		return Normal{}, fmt.Errorf("scaleSem %v is not a finite number >= 0", sem)
	}
	if score < l.Min || score > l.Max {
		return Normal{}, &RangeError{Score: score, Min: l.Min, Max: l.Max}
	}
	var x, a float64
	switch l.Kind {
	case LinkLinear:
		x, a = l.Slope*score+l.Intercept, l.Slope
	case LinkPoints:
		var err error
		if x, a, err = l.interpolate(score); err != nil {
			return Normal{}, err
		}
	default:
		return Normal{}, fmt.Errorf("link %s: unknown kind %q", l.ID, l.Kind)
	}
	return Normal{Mean: x, SD: math.Hypot(a*sem, l.LinkingError)}, nil
}

func (l *Link) interpolate(score float64) (x, slope float64, err error) {
	pts := l.Points
	if len(pts) < 2 {
		return 0, 0, errors.New("link " + l.ID + ": point table has fewer than 2 points")
	}
	seg := func(i int) float64 {
		return (pts[i+1].Measure - pts[i].Measure) / (pts[i+1].Score - pts[i].Score)
	}
	// i: first point with Score >= score.
	i := sort.Search(len(pts), func(j int) bool { return pts[j].Score >= score })
	switch {
	case i == len(pts): // above the table; Measure's range check keeps this from happening
		return 0, 0, &RangeError{Score: score, Min: l.Min, Max: l.Max}
	case pts[i].Score == score && i == 0:
		return pts[0].Measure, seg(0), nil
	case pts[i].Score == score && i == len(pts)-1:
		return pts[i].Measure, seg(i - 1), nil
	case pts[i].Score == score:
		return pts[i].Measure, (seg(i-1) + seg(i)) / 2, nil
	case i == 0:
		return 0, 0, &RangeError{Score: score, Min: l.Min, Max: l.Max}
	}
	s := seg(i - 1)
	return pts[i-1].Measure + s*(score-pts[i-1].Score), s, nil
}
