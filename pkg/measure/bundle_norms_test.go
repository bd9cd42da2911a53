package measure

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func sampleOf(framework string, rows ...struct {
	grade int
	toy   string
	ms    []float64
}) []NormSample {
	var out []NormSample
	for _, r := range rows {
		for _, m := range r.ms {
			out = append(out, NormSample{Framework: framework, Grade: r.grade, TimeOfYear: r.toy, Measure: m})
		}
	}
	return out
}

type gradeRow = struct {
	grade int
	toy   string
	ms    []float64
}

// TestBuildNormCurve: the documented rule, step by step.
func TestBuildNormCurve(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		sample []NormSample
		want   []float64
	}{
		{"MOY medians, straight continuation beyond both ends", sampleOf("a",
			gradeRow{2, "MOY", []float64{190, 200, 230}}, gradeRow{3, "MOY", []float64{250, 240, 260, 400}}, gradeRow{3, "BOY", []float64{0}}),
			// grade 2: 200; grade 3: (250+260)/2 = 255; slope 55 a grade both ways.
			[]float64{90, 145, 200, 255, 310, 365, 420, 475, 530, 585, 640, 695, 750}},
		{"BOY and EOY together where a grade has no MOY; interpolation between", sampleOf("a",
			gradeRow{0, "BOY", []float64{10}}, gradeRow{0, "EOY", []float64{30}}, gradeRow{4, "MOY", []float64{100}}, gradeRow{12, "EOY", []float64{500}}),
			[]float64{20, 40, 60, 80, 100, 150, 200, 250, 300, 350, 400, 450, 500}},
		{"a median not above the one before is raised by 1 unit", sampleOf("a",
			gradeRow{5, "MOY", []float64{600}}, gradeRow{6, "MOY", []float64{600}}, gradeRow{7, "MOY", []float64{590}}),
			[]float64{595, 596, 597, 598, 599, 600, 601, 602, 603, 604, 605, 606, 607}},
		{"rounded to 0.01 units", sampleOf("a", gradeRow{0, "MOY", []float64{0}}, gradeRow{3, "MOY", []float64{1}}),
			[]float64{0, 0.33, 0.67, 1, 1.33, 1.67, 2, 2.33, 2.67, 3, 3.33, 3.67, 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := BuildNormCurve(append(c.sample, NormSample{Framework: "other", Grade: 1, TimeOfYear: "MOY", Measure: 1e4}), "a")
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
	if _, err := BuildNormCurve(sampleOf("a", gradeRow{4, "MOY", []float64{1, 2, 3}}), "a"); err == nil ||
		err.Error() != "norm curve of a: measures at 1 grades; want at least 2 to draw a curve through" {
		t.Errorf("one grade: got %v; want the error", err)
	}
}

// TestAddNorms: norms and the norm curve of the sample's frameworks are written into the bundle,
// the other framework's rows kept; an unknown framework writes nothing.
func TestAddNorms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range demoFS() {
		if err := os.WriteFile(filepath.Join(dir, name), data.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var sample []NormSample
	for g := 1; g <= 3; g++ {
		for k := 0; k < 20; k++ {
			sample = append(sample, NormSample{Framework: "quantile", Grade: g, TimeOfYear: "MOY", Measure: float64(100*g + k)})
		}
	}
	before, _ := os.ReadFile(filepath.Join(dir, "grades.csv"))
	bad := append(slices.Clone(sample), NormSample{Framework: "science", Grade: 1, TimeOfYear: "MOY", Measure: 1})
	if _, err := AddNorms(dir, bad, DefaultNormPercentiles); err == nil || !strings.Contains(err.Error(), `the bundle has no framework "science" (it has lexile or quantile)`) {
		t.Errorf("unknown framework: got %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "grades.csv")); string(after) != string(before) {
		t.Error("a refused sample changed grades.csv")
	}
	w, err := AddNorms(dir, sample, DefaultNormPercentiles)
	if err != nil || w.Tables != 3 || !slices.Equal(w.Frameworks, []string{"quantile"}) {
		t.Fatalf("got %+v, %v; want 3 tables of quantile", w, err)
	}
	b, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := b.Framework("quantile")
	l, _ := b.Framework("lexile")
	want, _ := BuildNormCurve(sample, "quantile")
	if !slices.Equal(q.Norm, want) || l.Norm[3] != 515 || q.GradeMax[4] != 1075 {
		t.Errorf("quantile curve %v (want %v), lexile grade 3 %v (want 515 kept), quantile grade 4 cap %v (want 1075 kept)", q.Norm, want, l.Norm[3], q.GradeMax[4])
	}
	if _, ok := b.Norms("quantile", 5, "MOY"); ok {
		t.Error("quantile grade 5 norms kept; want the sample's tables only")
	}
	if _, ok := b.Norms("lexile", 5, "MOY"); !ok {
		t.Error("lexile grade 5 norms lost")
	}
}

// TestNewFrameworkFiles: the base of a bundle made from nothing loads with that framework only;
// parameters the loader refuses are refused here.
func TestNewFrameworkFiles(t *testing.T) {
	t.Parallel()
	f := Framework{Name: "acme", Label: "A", NegativePrefix: "-", Subject: "math", UnitsPerLogit: 50, SuccessAtMatch: 0.5,
		DisplayMin: 0, DisplayMax: 1000, PopulationSD: 80, GrowthSD: 20, StrandSpread: 30, ExtremeAdjust: 0.3}
	fsys, err := NewFrameworkFiles(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadFS(fsys)
	if err != nil || b.FrameworkList() != "acme" {
		t.Fatalf("got %v, %v", b, err)
	}
	if m, ok := b.Subject("math"); !ok || m.UnitsPerLogit != 50 || m.HasNormCurve() {
		t.Errorf("math: %+v", m)
	}
	for _, c := range []struct {
		edit func(*Framework)
		want string
	}{
		{func(f *Framework) { f.UnitsPerLogit = 0 }, "unitsPerLogit 0 is outside"},
		{func(f *Framework) { f.Subject = "art" }, `subject "art" is not`},
		{func(f *Framework) { f.Name = "Acme" }, `framework name "Acme": want lower case`},
		{func(f *Framework) { f.DisplayMax = f.DisplayMin }, "display caps"},
	} {
		g := f
		c.edit(&g)
		if _, err := NewFrameworkFiles(g); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v; want an error containing %q", err, c.want)
		}
	}
}
