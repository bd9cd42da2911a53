package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

func call(args ...string) (string, int) {
	var out, errOut bytes.Buffer
	code := exitCode(run(args, &out), &errOut)
	return out.String() + errOut.String(), code
}

// demoCopy writes the demo bundle's files into a new directory.
func demoCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, _ := os.ReadDir("../../demo")
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".csv") {
			data, err := os.ReadFile(filepath.Join("../../demo", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// setLine replaces line n (1-based) of a bundle file.
func setLine(t *testing.T, dir, file string, n int, text string) {
	t.Helper()
	p := filepath.Join(dir, file)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines[n-1] = text
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckValid: a valid bundle's summary per framework and its hash, exit 0.
func TestCheckValid(t *testing.T) {
	t.Parallel()
	out, code := call("check", demoCopy(t))
	if code != 0 || !regexp.MustCompile(`: valid, hash [0-9a-f]{12}\n`).MatchString(out) ||
		!strings.Contains(out, "lexile (subject reading): 2020 items (20 partial credit), 5 strands, 3 forms, 2 links; norm curve, benchmarks, 39 norms tables\n") {
		t.Errorf("got exit %d:\n%s", code, out)
	}
}

// TestCheckSeededProblems: a bundle with a dozen problems seeded across its files; check prints
// every one at its file:line, all at once, and exits 1.
func TestCheckSeededProblems(t *testing.T) {
	t.Parallel()
	dir := demoCopy(t)
	seeds := []struct {
		file string
		line int
		text string
		want string
	}{
		{"frameworks.csv", 3, "quantile,Q,EM,-180,0.5,-400,1650,75,300,0.3,100,math,Q", `frameworks.csv:3: framework "quantile": unitsPerLogit -180 is outside (0, +Inf)`},
		{"frameworks.csv", 4, "lexile,L,BR,180,0.75,-400,1825,75,300,0.3,100,math,L;S", `frameworks.csv:4: subject "math" is also framework "quantile"'s (line 3); a subject has at most one framework`},
		{"items.csv", 3, "L000001,lexile,Key Ideas,abc,", `items.csv:3: difficulty "abc" is not a number`},
		{"items.csv", 4, "L000002,lexile,Nowhere,616,", `items.csv:4: strand "Nowhere" is not declared for lexile in strands.csv`},
		{"items.csv", 5, "L000010,lexile,Key Ideas,10,", `items.csv:12: duplicate item id "L000010" (first at line 5)`},
		{"items.csv", 6, "L000004,lexile,Key Ideas,500,400;x", `items.csv:6: steps: step 2 "x" is not a number (steps are numbers separated by ;)`},
		{"items.csv", 7, "L000005,science,Key Ideas,500,", `items.csv:7: unknown framework "science"`},
		{"grades.csv", 5, "lexile,2,100,1100", `grades.csv:5: lexile norm 100 at grade 2 is not above 140 at grade 1; the norm curve must increase`},
		{"benchmarks.csv", 4, "lexile,0,MOY,130,-250", `benchmarks.csv:4: lower 130 is above upper -250`},
		{"links.csv", 3, "STATE-READ-2026,lexile,linear,-2.8,-780,200,800,45", `links.csv:3: slope -2.8 is not positive; a link must increase`},
		{"forms.csv", 3, "FORM-READ-G3,lexile,Q000001", `forms.csv:3: item "Q000001" is quantile, not lexile like form "FORM-READ-G3"`},
		{"norms.csv", 3, "lexile,0,NOY,1,-858", `norms.csv:3: time_of_year "NOY" is not BOY, MOY or EOY`},
	}
	for _, s := range seeds {
		setLine(t, dir, s.file, s.line, s.text)
	}
	out, code := call("check", dir)
	if code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	lines := strings.Split(out, "\n")
	for _, s := range seeds {
		if !slices.Contains(lines, s.want) {
			t.Errorf("output lacks %q", s.want)
		}
	}
	if !strings.Contains(out, "problems; the services would not load this bundle") {
		t.Errorf("no closing line:\n%s", out)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"check"}, {"check", "a", "b"}, {"diff", "a"}, {"lint", "a"}} {
		if out, code := call(args...); code != 2 || !strings.Contains(out, "usage:") {
			t.Errorf("%q: exit %d; want 2 with the usage\n%s", args, code, out)
		}
	}
	if out, code := call("diff", t.TempDir(), t.TempDir()); code != 2 || !strings.Contains(out, "does not load") {
		t.Errorf("diff of empty directories: exit %d; want 2\n%s", code, out)
	}
	if _, code := call("check", t.TempDir()); code != 1 {
		t.Errorf("check of an empty directory: exit %d; want 1 (it is an invalid bundle)", code)
	}
}

// calibrateNew does what yardstick-calibrate -new-framework does: the items of ids, simulated
// for 600 persons from the true logits, calibrated to mean M, strands from strand.
func calibrateNew(t *testing.T, ids []string, truth map[string]float64, mean float64, strand func(string) string, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var csv strings.Builder
	csv.WriteString("person," + strings.Join(ids, ",") + "\n")
	for p := 0; p < 600; p++ {
		theta := rng.NormFloat64()
		fmt.Fprintf(&csv, "P%d", p)
		for _, id := range ids {
			x := 0
			if rng.Float64() < 1/(1+math.Exp(truth[id]-theta)) {
				x = 1
			}
			fmt.Fprintf(&csv, ",%d", x)
		}
		csv.WriteString("\n")
	}
	resp, err := measure.ReadResponses(strings.NewReader(csv.String()), "responses.csv")
	if err != nil {
		t.Fatal(err)
	}
	base, err := measure.NewFrameworkFiles(measure.Framework{Name: "acme-math", Label: "AM", NegativePrefix: "N", Subject: "math",
		UnitsPerLogit: 100, SuccessAtMatch: 0.5, DisplayMin: -500, DisplayMax: 1500, PopulationSD: 170, GrowthSD: 40, StrandSpread: 55, ExtremeAdjust: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := measure.LoadFS(base)
	if err != nil {
		t.Fatal(err)
	}
	strands := map[string]string{}
	for _, id := range ids {
		strands[id] = strand(id)
	}
	_, items, err := measure.CalibrateBank(context.Background(), measure.BankJob{Responses: resp, Framework: "acme-math", Base: b, Mean: mean, Strands: strands})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := measure.ExtendBundle(base, items, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDiffTwoCalibrations: two calibrations of overlapping items (M01–M20 and M06–M25, the
// second at another mean and with two items in another strand): diff lists the 5 items removed,
// the 5 added and the 15 changed, each once, the changed ones largest change first; identical
// bundles exit 0.
func TestDiffTwoCalibrations(t *testing.T) {
	t.Parallel()
	truth := map[string]float64{}
	var all []string
	for i := 1; i <= 25; i++ {
		id := fmt.Sprintf("M%02d", i)
		truth[id] = -2 + 4*float64(i-1)/24
		all = append(all, id)
	}
	strand := func(id string) string { return "Number" }
	moved := func(id string) string {
		if id == "M07" || id == "M09" {
			return "Shape"
		}
		return "Number"
	}
	a := calibrateNew(t, all[:20], truth, 500, strand, 1)
	b := calibrateNew(t, all[5:], truth, 540, moved, 2)
	out, code := call("diff", a, b)
	if code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	count := map[string]int{}
	var sizes []float64
	for _, l := range lines[:len(lines)-1] {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != "item" {
			if !strings.HasPrefix(l, "framework acme-math: strands") {
				t.Errorf("unexpected line %q", l)
			}
			continue
		}
		count[f[1]]++
		if m := regexp.MustCompile(`\(([+-][0-9.]+) units\)`).FindStringSubmatch(l); m != nil {
			var v float64
			fmt.Sscan(m[1], &v)
			sizes = append(sizes, math.Abs(v))
		}
		want := "changed:"
		switch id := f[1]; {
		case id <= "M05":
			want = "removed:"
		case id >= "M21":
			want = "added:"
		}
		if f[2] != want {
			t.Errorf("%q: want %s", l, want)
		}
		if (f[1] == "M07" || f[1] == "M09") != strings.Contains(l, `strand "Number" -> "Shape"`) {
			t.Errorf("%q: the move of strand is wrong", l)
		}
	}
	if len(count) != 25 {
		t.Errorf("%d items reported; want 25", len(count))
	}
	for id, n := range count {
		if n != 1 {
			t.Errorf("item %s reported %d times; want once", id, n)
		}
	}
	if len(sizes) != 15 || !slices.IsSortedFunc(sizes, func(x, y float64) int { return -cmpF(x, y) }) {
		t.Errorf("changes %v; want 15, largest first", sizes)
	}
	if !strings.HasSuffix(strings.TrimSpace(out), fmt.Sprintf("%d changes", len(lines)-1)) {
		t.Errorf("no count line:\n%s", out)
	}
	if out, code := call("diff", a, a); code != 0 || !strings.Contains(out, "hold the same content") {
		t.Errorf("same bundle: exit %d\n%s", code, out)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("diff output:\n%s", out)
	}
}

func cmpF(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
