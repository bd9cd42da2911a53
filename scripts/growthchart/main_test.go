package main

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/growth.golden.svg")

// TestDrawGolden draws the service's answer in testdata (the forecast service's golden growth
// answer) and pins the SVG.
func TestDrawGolden(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "growth.svg")
	if err := run("testdata/request.json", "testdata/answer.json", out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/growth.golden.svg", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/growth.golden.svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the SVG differs from testdata/growth.golden.svg (go test -run TestDrawGolden -update rewrites it)")
	}
	// Well-formed XML; a point per measure (two priors and the current one); a fan line per cut.
	dec := xml.NewDecoder(bytes.NewReader(got))
	circles, fan := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "circle":
				circles++
			case "line":
				for _, a := range se.Attr {
					if a.Name.Local == "stroke" && a.Value == "#4a7fc1" {
						fan++
					}
				}
			}
		}
	}
	if circles != 3 || fan != 5 {
		t.Errorf("got %d points and %d fan lines; want 3 (two priors, the current measure) and 5 (the cuts)", circles, fan)
	}
	for _, want := range []string{"SGP 42", "P10: 705L", "P90: 1005L", "grade 4 EOY and grade 5 EOY"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the chart does not say %q", want)
		}
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
	noPriors := write("nopriors.json", `{"grade":6,"timeOfYear":"EOY","ability":820}`)
	noCuts := write("nocuts.json", `{"sgp":42,"sgpOrder":1,"cuts":[]}`)
	badSGP := write("badsgp.json", `{"sgp":0,"cuts":[{"percentile":50,"ability":800}]}`)
	broken := write("broken.json", `{"sgp":`)
	for _, c := range []struct{ name, req, ans, want string }{
		{"flags missing", "", "", "-request and -answer are required"},
		{"no priors", noPriors, "testdata/answer.json", "no priors"},
		{"no cuts", "testdata/request.json", noCuts, "no cuts to draw"},
		{"sgp 0", "testdata/request.json", badSGP, "sgp 0 is not a growth percentile"},
		{"not JSON", "testdata/request.json", broken, "broken.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := run(c.req, c.ans, filepath.Join(dir, c.name+".svg"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want an error containing %q", err, c.want)
			}
		})
	}
}
