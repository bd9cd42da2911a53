package measure

import (
	"math"
	"strconv"
)

// Display formats a measure for people (§8): rounded half up to the nearest 5 (572.5 → 575,
// 572.4 → 570, −572.5 → −570), clamped to [DisplayMin, DisplayMax], then a value < 0 shows as
// prefix + |value| + label (BR150L, EM50Q) and any other as value + label (845L, 0L). The sign is
// judged after rounding: −2.5 rounds to 0 and shows as 0L, −3 rounds to −5 and shows as BR5L.
// +Inf and −Inf clamp to the caps; NaN, which the estimators never return, gives "".
func (f *Framework) Display(v float64) string {
	return f.display(v, f.DisplayMax)
}

// DisplayGrade is Display with the grade's top cap (GradeMax[grade]) in place of DisplayMax.
// A grade outside 0..12 uses DisplayMax.
func (f *Framework) DisplayGrade(v float64, grade int) string {
	top := f.DisplayMax
	if grade >= 0 && grade < len(f.GradeMax) {
		top = f.GradeMax[grade]
	}
	return f.display(v, top)
}

func (f *Framework) display(v, top float64) string {
	if math.IsNaN(v) {
		return ""
	}
	r := 5 * math.Floor(v/5+0.5)
	r = math.Max(f.DisplayMin, math.Min(r, top))
	if r < 0 {
		return f.NegativePrefix + strconv.FormatFloat(math.Abs(r), 'f', 0, 64) + f.Label
	}
	return strconv.FormatFloat(r, 'f', 0, 64) + f.Label
}

// Round is the rule for the ability and uncertainty integers: the nearest whole number, half up
// (floor(v + 0.5): 2.5 → 3, −2.5 → −2). Results are clamped to the int32 range the wire carries;
// NaN gives 0.
func Round(v float64) int {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt32:
		return math.MaxInt32
	case v <= math.MinInt32:
		return math.MinInt32
	}
	return int(math.Floor(v + 0.5))
}
