package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/yardstick-dev/yardstick/scripts/internal/chart"
)

// z80 is the standard normal quantile of 0.9: ability ± z80·uncertainty is the central 80% band.
const z80 = 1.2815515655446004

const (
	width, height            = 760.0, 420.0
	left, right, top, bottom = 70.0, 30.0, 50.0, 70.0
)

// draw writes the chart. Days run left to right from the measure (day 0) to the last point;
// measures bottom to top over the band, the target and the starting measure, padded by a tenth.
func draw(w io.Writer, req request, ans answer) error {
	target := *req.Target
	start := point{Ability: req.PriorAbility, Uncertainty: req.PriorUncertainty, TimeOfYear: req.TimeOfYear, Grade: req.Grade}
	pts := append([]point{start}, ans.Trajectory...)
	lo, hi := target, target
	for _, p := range pts {
		lo = math.Min(lo, p.Ability-z80*p.Uncertainty)
		hi = math.Max(hi, p.Ability+z80*p.Uncertainty)
	}
	pad := (hi - lo) / 10
	lo, hi = lo-pad, hi+pad
	maxDays := pts[len(pts)-1].ElapsedDays
	x := func(days float64) float64 { return left + (width-left-right)*days/maxDays }
	y := func(v float64) float64 { return top + (height-top-bottom)*(hi-v)/(hi-lo) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="white"/>`+"\n", width, height)
	title := fmt.Sprintf("Growth plan (%s): from %g at %s %s, toward %g", ans.Framework, req.PriorAbility, chart.GradeName(req.Grade), req.TimeOfYear, target)
	fmt.Fprintf(&b, `<text x="%g" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))

	// Axes and horizontal grid.
	step := chart.NiceStep((hi - lo) / 6)
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, width-right, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" fill="#555">%g</text>`+"\n", left-6, y(v)+4, v)
	}
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="#333"/>`+"\n", left, width-right, height-bottom, height-bottom)
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="#333"/>`+"\n", left, left, top, height-bottom)

	// The 80% band, then the expected measure.
	var band, line strings.Builder
	for i, p := range pts {
		fmt.Fprintf(&band, "%s%.1f,%.1f", chart.Sep(i), x(p.ElapsedDays), y(p.Ability+z80*p.Uncertainty))
		fmt.Fprintf(&line, "%s%.1f,%.1f", chart.Sep(i), x(p.ElapsedDays), y(p.Ability))
	}
	for i := len(pts) - 1; i >= 0; i-- {
		fmt.Fprintf(&band, " %.1f,%.1f", x(pts[i].ElapsedDays), y(pts[i].Ability-z80*pts[i].Uncertainty))
	}
	fmt.Fprintf(&b, `<polygon points="%s" fill="#4a7fc1" fill-opacity="0.18" stroke="none"/>`+"\n", band.String())
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#1f4e8c" stroke-width="2"/>`+"\n", line.String())

	// The target.
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#c0392b" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n", left, width-right, y(target), y(target))
	fmt.Fprintf(&b, `<text x="%g" y="%.1f" fill="#c0392b">target %g</text>`+"\n", left+6, y(target)-6, target)

	// Each school time: its point, its label under the axis, and P(at or above the target).
	for i, p := range pts {
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="#1f4e8c"/>`+"\n", x(p.ElapsedDays), y(p.Ability))
		label := fmt.Sprintf("%s %s", strings.TrimPrefix(chart.GradeName(p.Grade), "grade "), p.TimeOfYear)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle" fill="#333">%s</text>`+"\n", x(p.ElapsedDays), height-bottom+16, html.EscapeString(label))
		if i > 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#1f4e8c" font-size="11">%.0f%%</text>`+"\n", x(p.ElapsedDays), y(p.Ability+z80*p.Uncertainty)-6, 100*p.Probability)
		}
	}

	// The reach, or a note that the horizon holds none.
	note := "not reached within the horizon"
	if r := ans.Reach; r != nil {
		want := 0.5
		if req.Probability != nil {
			want = *req.Probability
		}
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#27ae60" stroke-width="1.5"/>`+"\n", x(r.ElapsedDays), x(r.ElapsedDays), top, height-bottom)
		note = fmt.Sprintf("reached on day %g (P ≥ %g%%: %.0f%%, expected %s)", r.ElapsedDays, 100*want, 100*r.Probability, r.AbilityDisplay)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" fill="#27ae60">%s</text>`+"\n", left, height-bottom+36, html.EscapeString(note))
	fmt.Fprintf(&b, `<text x="%g" y="%g" fill="#555" font-size="11">line: expected measure; band: 80%% interval; %%: probability of being at or above the target</text>`+"\n", left, height-bottom+54)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
