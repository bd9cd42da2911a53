package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/yardstick-dev/yardstick/scripts/internal/chart"
)

const (
	width, height            = 760.0, 420.0
	left, right, top, bottom = 70.0, 150.0, 50.0, 70.0
)

// yearsOf places a school time on the time axis: grade g's BOY at g, MOY g + 0.5, EOY g + 1.
func yearsOf(m measure) float64 {
	t := float64(m.Grade)
	switch strings.ToUpper(m.TimeOfYear) {
	case "MOY":
		t += 0.5
	case "EOY":
		t++
	}
	return t
}

// draw writes the chart: school times left to right from the oldest prior to the current
// measure; measures bottom to top over every point and cut, padded by a tenth.
func draw(w io.Writer, req request, ans answer) error {
	pts := slices.Clone(req.Priors)
	slices.SortFunc(pts, func(a, b measure) int { return int(math.Copysign(1, yearsOf(a)-yearsOf(b))) })
	latest := pts[len(pts)-1]
	cur := req.measure
	lo, hi := cur.Ability, cur.Ability
	for _, p := range pts {
		lo, hi = math.Min(lo, p.Ability), math.Max(hi, p.Ability)
	}
	for _, c := range ans.Cuts {
		lo, hi = math.Min(lo, c.Ability), math.Max(hi, c.Ability)
	}
	pad := (hi - lo) / 10
	lo, hi = lo-pad, hi+pad
	t0, t1 := yearsOf(pts[0]), yearsOf(cur)
	x := func(m measure) float64 { return left + (width-left-right)*(yearsOf(m)-t0)/(t1-t0) }
	y := func(v float64) float64 { return top + (height-top-bottom)*(hi-v)/(hi-lo) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="white"/>`+"\n", width, height)
	title := fmt.Sprintf("Growth percentile (%s): %g at %s %s, SGP %d", ans.Framework, cur.Ability, chart.GradeName(cur.Grade), strings.ToUpper(cur.TimeOfYear), ans.Sgp)
	fmt.Fprintf(&b, `<text x="%g" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))

	step := chart.NiceStep((hi - lo) / 6)
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, width-right, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" fill="#555">%g</text>`+"\n", left-6, y(v)+4, v)
	}
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="#333"/>`+"\n", left, width-right, height-bottom, height-bottom)
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="#333"/>`+"\n", left, left, top, height-bottom)

	// The fan: from the latest prior to each cut at the current school time, shaded between
	// neighbouring cuts, each labelled with its percentile.
	for i := 1; i < len(ans.Cuts); i++ {
		a, c := ans.Cuts[i-1], ans.Cuts[i]
		fmt.Fprintf(&b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="#4a7fc1" fill-opacity="%.2f" stroke="none"/>`+"\n",
			x(latest), y(latest.Ability), x(cur), y(a.Ability), x(cur), y(c.Ability), 0.08+0.12*(1-math.Abs(float64(a.Percentile+c.Percentile)/100-1)))
	}
	for _, c := range ans.Cuts {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#4a7fc1" stroke-width="1"/>`+"\n", x(latest), y(latest.Ability), x(cur), y(c.Ability))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#1f4e8c" font-size="11">P%d: %s</text>`+"\n", x(cur)+8, y(c.Ability)+4, c.Percentile, html.EscapeString(c.AbilityDisplay))
	}

	// The student's road: priors, then the current measure.
	road := append(slices.Clone(pts), cur)
	var line strings.Builder
	for i, p := range road {
		fmt.Fprintf(&line, "%s%.1f,%.1f", chart.Sep(i), x(p), y(p.Ability))
	}
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#c0392b" stroke-width="2"/>`+"\n", line.String())
	for i, p := range road {
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="#c0392b"/>`+"\n", x(p), y(p.Ability))
		label := fmt.Sprintf("%s %s", strings.TrimPrefix(chart.GradeName(p.Grade), "grade "), strings.ToUpper(p.TimeOfYear))
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle" fill="#333">%s</text>`+"\n", x(p), height-bottom+16, html.EscapeString(label))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#c0392b" font-size="11">%g</text>`+"\n", x(p), y(p.Ability)-9, p.Ability)
		if i == len(road)-1 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#c0392b" font-weight="bold">SGP %d</text>`+"\n", x(p)-60, y(p.Ability)+4, ans.Sgp)
		}
	}
	used := make([]string, len(ans.Priors))
	for i, p := range ans.Priors {
		used[i] = fmt.Sprintf("%s %s", chart.GradeName(p.Grade), p.TimeOfYear)
	}
	note := fmt.Sprintf("norms of %d prior(s): %s; the student grew more than %d in 100 who started alike", ans.SgpOrder, strings.Join(used, " and "), ans.Sgp)
	fmt.Fprintf(&b, `<text x="%g" y="%g" fill="#c0392b">%s</text>`+"\n", left, height-bottom+36, html.EscapeString(note))
	fmt.Fprintf(&b, `<text x="%g" y="%g" fill="#555" font-size="11">red: the student's measures; fan: the current measure above which growth reaches each percentile</text>`+"\n", left, height-bottom+54)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
