package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// TestRunNewFramework: -new-framework writes a bundle of that framework and the calibrated items
// only, the items' mean at -mean, the scale as the flags say and the documented defaults.
func TestRunNewFramework(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "bundle")
	if _, _, err := call(t, "-new-framework", "acme-math", "-subject", "math", "-label", "AM", "-units-per-logit", "120",
		"-mean", "600", "-out", out, booklets); err != nil {
		t.Fatal(err)
	}
	b, err := measure.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := b.Subject("math")
	if !ok || b.FrameworkList() != "acme-math" {
		t.Fatalf("frameworks %s; want acme-math only, subject math", b.FrameworkList())
	}
	want := measure.Framework{Name: "acme-math", Label: "AM", NegativePrefix: "-", Subject: "math", UnitsPerLogit: 120,
		SuccessAtMatch: 0.5, DisplayMin: 0, DisplayMax: 1200, PopulationSD: 200, GrowthSD: 50, StrandSpread: 67, ExtremeAdjust: 0.3}
	got := measure.Framework{Name: f.Name, Label: f.Label, NegativePrefix: f.NegativePrefix, Subject: f.Subject, UnitsPerLogit: f.UnitsPerLogit,
		SuccessAtMatch: f.SuccessAtMatch, DisplayMin: f.DisplayMin, DisplayMax: f.DisplayMax, PopulationSD: f.PopulationSD,
		GrowthSD: f.GrowthSD, StrandSpread: f.StrandSpread, ExtremeAdjust: f.ExtremeAdjust}
	if got.Name != want.Name || got.Label != want.Label || got.NegativePrefix != want.NegativePrefix || got.Subject != want.Subject ||
		got.UnitsPerLogit != want.UnitsPerLogit || got.SuccessAtMatch != want.SuccessAtMatch || got.DisplayMin != want.DisplayMin ||
		got.DisplayMax != want.DisplayMax || got.PopulationSD != want.PopulationSD || got.GrowthSD != want.GrowthSD ||
		got.StrandSpread != want.StrandSpread || got.ExtremeAdjust != want.ExtremeAdjust {
		t.Errorf("got %+v; want %+v", got, want)
	}
	page := b.Items(measure.ItemQuery{Framework: "acme-math", Limit: 1000}).Items
	sum := 0.0
	for _, it := range page {
		sum += it.Difficulty
	}
	if len(page) != 24 || sum/24 < 599.95 || sum/24 > 600.05 {
		t.Errorf("%d items of mean %v; want 24 at 600 (to the 0.01 rounding)", len(page), sum/24)
	}
	if _, ok := b.Item("L000001"); ok {
		t.Error("the bundle holds demo items")
	}
	// -anchors takes the new framework as it takes the demo's: the same data anchored on the
	// bundle finds every item an anchor of acme-math.
	rep := filepath.Join(t.TempDir(), "report.json")
	if _, _, err := call(t, "-framework", "acme-math", "-anchors", out, "-report", rep, booklets); err != nil {
		t.Fatal(err)
	}
	if r, _ := readReport(t, rep); len(r.Anchors) != 24 {
		t.Errorf("anchored on the new bundle: %d anchors; want 24", len(r.Anchors))
	}
	// Given scale parameters win over the defaults; an item added later anchors on any framework.
	out2 := filepath.Join(t.TempDir(), "b2")
	if _, _, err := call(t, "-new-framework", "acme-read", "-subject", "none", "-label", "R", "-units-per-logit", "10",
		"-mean", "0", "-success-at-match", "0.75", "-display-min", "-50", "-display-max", "50", "-negative-prefix", "N",
		"-population-sd", "9", "-growth-sd", "0", "-strand-spread", "4", "-extreme-adjust", "0.49", "-out", out2, booklets); err != nil {
		t.Fatal(err)
	}
	b2, err := measure.LoadDir(out2)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := b2.Framework("acme-read")
	if r.Subject != "" || r.SuccessAtMatch != 0.75 || r.DisplayMin != -50 || r.DisplayMax != 50 || r.NegativePrefix != "N" ||
		r.PopulationSD != 9 || r.GrowthSD != 0 || r.StrandSpread != 4 || r.ExtremeAdjust != 0.49 {
		t.Errorf("acme-read: %+v", r)
	}
}

// TestRunNewFrameworkRefuses: what -new-framework needs, and what it cannot take, is a usage
// error before anything is read or written.
func TestRunNewFrameworkRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := []string{"-new-framework", "acme", "-subject", "reading", "-label", "A", "-units-per-logit", "100", "-mean", "500", "-out", filepath.Join(dir, "out")}
	without := func(flag string) []string {
		var out []string
		for i := 0; i < len(base); i += 2 {
			if base[i] != flag {
				out = append(out, base[i], base[i+1])
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no -mean", append(without("-mean"), booklets), "-new-framework needs -mean M"},
		{"no -label", append(without("-label"), booklets), "-new-framework needs -label"},
		{"no -units-per-logit", append(without("-units-per-logit"), booklets), "-new-framework needs -units-per-logit S (> 0)"},
		{"no -out", append(without("-out"), booklets), "-new-framework needs -out DIR"},
		{"bad subject", append(append(without("-subject"), "-subject", "art"), booklets), `-subject "art": want reading, math or none`},
		{"with -framework", append(append(slicesClone(base), "-framework", "lexile"), booklets), "give neither -framework nor -anchors"},
		{"one display cap", append(append(slicesClone(base), "-display-min", "0"), booklets), "give both -display-min and -display-max, or neither"},
		{"no response file", slicesClone(base), "want one response file after the flags, got 0 arguments"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := call(t, c.args...)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want a usage error containing %q", err, c.want)
			}
		})
	}
	// Parameters the framework cannot have: refused, nothing written.
	out := filepath.Join(dir, "zero")
	args := []string{"-new-framework", "acme", "-subject", "reading", "-label", "A", "-units-per-logit", "100", "-mean", "500",
		"-success-at-match", "1", "-out", out, booklets}
	if _, _, err := call(t, args...); err == nil || !strings.Contains(err.Error(), "successAtMatch 1 is outside (0, 1)") {
		t.Errorf("success at match 1: got %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output written after a refusal: %v", err)
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// TestNormsBundle: norms -bundle writes the sample's norms and norm curve into the bundle, which
// then loads with them; -out and -bundle together is a usage error.
func TestNormsBundle(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "bundle")
	if _, _, err := call(t, "-new-framework", "acme", "-subject", "reading", "-label", "A", "-units-per-logit", "100", "-mean", "500", "-out", out, booklets); err != nil {
		t.Fatal(err)
	}
	var sample strings.Builder
	sample.WriteString("framework,grade,time_of_year,measure\n")
	for g := 2; g <= 4; g++ {
		for k := 0; k < 10; k++ {
			sample.WriteString("acme," + string(rune('0'+g)) + ",MOY," + string(rune('0'+k)) + "0" + string(rune('0'+g)) + "\n")
		}
	}
	measures := write(t, t.TempDir(), "measures.csv", sample.String())
	_, stderr, err := call(t, "norms", "-bundle", out, measures)
	if err != nil || !strings.Contains(stderr, "3 norms tables and the norm curves of acme from 30 measures written to") {
		t.Fatalf("norms: %v\n%s", err, stderr)
	}
	b, err := measure.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := b.Framework("acme"); !f.HasNormCurve() {
		t.Error("no norm curve after norms -bundle")
	}
	if _, ok := b.Norms("acme", 3, "MOY"); !ok {
		t.Error("no grade 3 MOY norms after norms -bundle")
	}
	if _, _, err := call(t, "norms", "-bundle", out, "-out", "x.csv", measures); !errors.Is(err, errUsage) {
		t.Errorf("-bundle and -out: got %v; want a usage error", err)
	}
}
