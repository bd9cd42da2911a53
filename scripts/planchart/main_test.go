package main

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/plan.golden.svg")

func TestDrawGolden(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "plan.svg")
	if err := run("testdata/request.json", "testdata/answer.json", out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/plan.golden.svg", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/plan.golden.svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the SVG differs from testdata/plan.golden.svg (go test -run TestDrawGolden -update rewrites it)")
	}
	// Well-formed XML, one circle per point (the measure and 10 trajectory points), the reach named.
	dec := xml.NewDecoder(bytes.NewReader(got))
	circles := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed XML: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "circle" {
			circles++
		}
	}
	if circles != 10 {
		t.Errorf("got %d points drawn; want 10 (the measure and 9 trajectory points)", circles)
	}
	if !strings.Contains(string(got), "reached on day 1449") {
		t.Error("the reach (day 1449) is not named")
	}
}

func TestRunRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noTarget := write("notarget.json", `{"priorAbility":500,"priorUncertainty":50}`)
	empty := write("empty.json", `{"trajectory":[],"reach":null}`)
	broken := write("broken.json", `{"trajectory":`)
	cases := []struct{ name, req, ans, want string }{
		{"flags missing", "", "", "-request and -answer are required"},
		{"no target", noTarget, "testdata/answer.json", "no target"},
		{"empty trajectory", "testdata/request.json", empty, "nothing to draw"},
		{"not JSON", "testdata/request.json", broken, "broken.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := run(c.req, c.ans, filepath.Join(dir, c.name+".svg"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want an error containing %q", err, c.want)
			}
		})
	}
}

func TestNotReached(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	target := 2000.0
	ans := answer{Framework: "lexile", Trajectory: []point{{Grade: 3, TimeOfYear: "EOY", ElapsedDays: 182.625, Ability: 560, Uncertainty: 70, Probability: 0}}}
	if err := draw(&b, request{PriorAbility: 520, PriorUncertainty: 60, Target: &target, Grade: 3, TimeOfYear: "MOY"}, ans); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "not reached within the horizon") {
		t.Error("a plan with no reach does not say so")
	}
}
