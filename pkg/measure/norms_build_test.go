package measure

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"
)

// TestBuildNormsQuantiles: R's type-7 sample quantile: for the measures 1…101 the p-th
// percentile is 1 + p, and between order statistics it interpolates.
func TestBuildNormsQuantiles(t *testing.T) {
	t.Parallel()
	var sample []NormSample
	for v := 101; v >= 1; v-- { // any order
		sample = append(sample, NormSample{"lexile", 3, "MOY", float64(v)})
	}
	sample = append(sample, NormSample{"lexile", 3, "BOY", 10}, NormSample{"lexile", 3, "BOY", 20})
	got, err := BuildNorms(sample, []float64{1, 2.5, 50, 99})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].TimeOfYear != "BOY" || got[1].TimeOfYear != "MOY" {
		t.Fatalf("got %+v; want the BOY table, then MOY", got)
	}
	for i, want := range []float64{2, 3.5, 51, 100} {
		if got[1].Measures[i] != want {
			t.Errorf("MOY point %d = %v; want %v", i, got[1].Measures[i], want)
		}
	}
	for i, want := range []float64{10.1, 10.25, 15, 19.9} { // two measures: 10 + 10·p/100
		if got[0].Measures[i] != want {
			t.Errorf("BOY point %d = %v; want %v", i, got[0].Measures[i], want)
		}
	}
}

// TestBuildNormsRoundTrip: norms built from a large normal sample, written and loaded as the
// bundle's norms.csv, rank the sample's mean at 50 and mean ± 1 SD near 16 and 84.
func TestBuildNormsRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 23))
	var sample []NormSample
	for i := 0; i < 20000; i++ {
		sample = append(sample, NormSample{"quantile", 5, "EOY", 700 + 150*rng.NormFloat64()})
	}
	tables, err := BuildNorms(sample, DefaultNormPercentiles)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteNorms(&buf, tables, "test norms"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "# test norms\nframework,grade,time_of_year,percentile,measure\nquantile,5,EOY,1,") {
		t.Fatalf("written norms start %q", buf.String()[:80])
	}
	m := demoFS()
	m["norms.csv"] = &fstest.MapFile{Data: buf.Bytes()}
	b, err := LoadFS(m)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := b.Norms("quantile", 5, "EOY")
	if !ok {
		t.Fatal("no quantile grade 5 EOY norms after loading the written file")
	}
	if _, ok := b.Norms("lexile", 3, "MOY"); ok {
		t.Error("the written file replaced the demo norms, yet lexile grade 3 MOY is still there")
	}
	for _, c := range []struct {
		measure float64
		want    int
	}{{700, 50}, {550, 16}, {850, 84}} {
		if got := n.Rank(c.measure); math.Abs(float64(got-c.want)) > 1 {
			t.Errorf("Rank(%v) = %d; want %d ± 1", c.measure, got, c.want)
		}
	}
}

func TestBuildNormsRefuses(t *testing.T) {
	t.Parallel()
	same := []NormSample{{"lexile", 2, "MOY", 300}, {"lexile", 2, "MOY", 300}, {"lexile", 4, "BOY", 1}, {"lexile", 4, "BOY", 2}}
	for _, c := range []struct {
		name        string
		sample      []NormSample
		percentiles []float64
		want        string
	}{
		{"one percentile", same[2:], []float64{50}, "1 percentiles; want at least 2"},
		{"percentile 0", same[2:], []float64{0, 50}, "must increase strictly within (0, 100)"},
		{"percentile 100", same[2:], []float64{50, 100}, "must increase strictly within (0, 100)"},
		{"percentiles not increasing", same[2:], []float64{50, 50}, "must increase strictly within (0, 100)"},
		{"too few distinct measures", same, []float64{10, 90}, "lexile grade 2 MOY: the 2 measures give percentile points [300 300] that do not increase strictly"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := BuildNorms(c.sample, c.percentiles); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want an error containing %q", err, c.want)
			}
		})
	}
	// The boundaries that are accepted: percentiles just inside (0, 100).
	if _, err := BuildNorms(same[2:], []float64{math.SmallestNonzeroFloat64, math.Nextafter(100, 0)}); err != nil {
		t.Errorf("percentiles just inside (0, 100): %v", err)
	}
}

func TestReadNormSample(t *testing.T) {
	t.Parallel()
	good := "# a comment\nframework,grade,time_of_year,measure\nlexile,0,BOY,-120.5\nquantile,12,EOY,1300\n"
	got, err := ReadNormSample(strings.NewReader(good), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []NormSample{{"lexile", 0, "BOY", -120.5}, {"quantile", 12, "EOY", 1300}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v; want %v", got, want)
	}
	bad := "framework,grade,time_of_year,measure\nlexile,13,BOY,1\n,3,MOY,1\nlexile,3,NOY,1\nlexile,3,MOY,NaN\nlexile,3,MOY\n"
	_, err = ReadNormSample(strings.NewReader(bad), "m.csv")
	for _, w := range []string{`m.csv:2: grade "13" is not a grade 0-12`, `m.csv:3: framework is empty`,
		`m.csv:4: time_of_year "NOY" is not BOY, MOY or EOY`, `m.csv:5: measure "NaN" is not a finite number`,
		`m.csv:6: 3 columns; want 4 (framework,grade,time_of_year,measure)`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("got %v; want a line %q", err, w)
		}
	}
	if _, err := ReadNormSample(strings.NewReader("framework,grade,time_of_year,measure\n"), "m.csv"); err == nil || err.Error() != "m.csv: no measures" {
		t.Errorf("no rows: got %v; want m.csv: no measures", err)
	}
}
