package measure

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// growth_norms.csv, the bundle's optional growth norms (README.md, "Content bundle format"): one
// model in 2m + 101 rows (m priors), each row a part of the model named by framework, current
// window and priors ("6:EOY;7:EOY", older first):
//
//	knots        1 … m   the prior's four interior knots
//	boundaries   1 … m   the prior's lower and upper boundary
//	range        1       the cohort's lowest and highest current measure
//	coefficients 1 … 100 τ_k's 1 + 7m coefficients in the design's column order
//
// Values are numbers separated by ";".

var growthNormsHeader = []string{"framework", "grade", "time_of_year", "priors", "part", "index", "values"}

// growthKey names a model: framework, current window, and priors (older first; the second zero
// for a one-prior model).
type growthKey struct {
	framework string
	current   Window
	order     int
	priors    [2]Window
}

func keyOf(m *GrowthModel) growthKey {
	k := growthKey{framework: m.Framework, current: m.Current, order: len(m.Priors)}
	copy(k.priors[:], m.Priors)
	return k
}

// formatWindows writes windows as "6:EOY;7:EOY".
func formatWindows(ws []Window) string {
	parts := make([]string, len(ws))
	for k, w := range ws {
		parts[k] = fmt.Sprintf("%d:%s", w.Grade, w.TimeOfYear)
	}
	return strings.Join(parts, ";")
}

// parseWindows reads "6:EOY;7:EOY": one or two windows, in time order.
func parseWindows(s string) ([]Window, error) {
	parts := strings.Split(s, ";")
	if len(parts) > 2 {
		return nil, fmt.Errorf("%d windows; want 1 or 2", len(parts))
	}
	ws := make([]Window, len(parts))
	for k, part := range parts {
		g, t, ok := strings.Cut(strings.TrimSpace(part), ":")
		grade, err := strconv.Atoi(g)
		if !ok || err != nil || grade < 0 || grade >= Grades {
			return nil, fmt.Errorf("window %q is not grade:time_of_year (grade 0-12)", part)
		}
		tod, ok := TimeOfYear(t)
		if !ok || tod != t {
			return nil, fmt.Errorf("window %q: time of year %q is not BOY, MOY or EOY", part, t)
		}
		ws[k] = Window{Grade: grade, TimeOfYear: tod}
	}
	if len(ws) == 2 && !ws[0].Before(ws[1]) {
		return nil, fmt.Errorf("%s is not before %s; priors go older first", ws[0], ws[1])
	}
	return ws, nil
}

func joinNumbers(v []float64) string {
	parts := make([]string, len(v))
	for k, x := range v {
		parts[k] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(parts, ";")
}

// WriteGrowthNorms encodes models as the bundle's growth_norms.csv, in order of framework,
// current window and priors; numbers are written exactly (shortest round-trip form).
func WriteGrowthNorms(models []*GrowthModel, comment string) []byte {
	sorted := append([]*GrowthModel(nil), models...)
	sort.SliceStable(sorted, func(a, b int) bool { return keyOf(sorted[a]).less(keyOf(sorted[b])) })
	var buf bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(comment), "\n") {
		if line != "" {
			fmt.Fprintf(&buf, "# %s\n", line)
		}
	}
	w := csv.NewWriter(&buf)
	_ = w.Write(growthNormsHeader)
	for _, m := range sorted {
		head := []string{m.Framework, strconv.Itoa(m.Current.Grade), m.Current.TimeOfYear, formatWindows(m.Priors)}
		put := func(part string, index int, v []float64) {
			_ = w.Write(append(head[:4:4], part, strconv.Itoa(index), joinNumbers(v)))
		}
		for k, s := range m.Splines {
			put("knots", k+1, s.Knots[:])
			put("boundaries", k+1, s.Boundaries[:])
		}
		put("range", 1, []float64{m.Lowest, m.Highest})
		for k, c := range m.Coefficients {
			put("coefficients", k+1, c)
		}
	}
	w.Flush()
	return buf.Bytes()
}

// less orders keys by framework, current window, order and priors.
func (k growthKey) less(o growthKey) bool {
	switch {
	case k.framework != o.framework:
		return k.framework < o.framework
	case k.current != o.current:
		return k.current.Before(o.current)
	case k.order != o.order:
		return k.order < o.order
	case k.priors[0] != o.priors[0]:
		return k.priors[0].Before(o.priors[0])
	}
	return k.priors[1].Before(o.priors[1])
}
