package measure

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure/internal/democontent"
)

func TestDemoLoads(t *testing.T) {
	t.Parallel()
	if _, err := loadDemo(); err != nil {
		t.Fatalf("embedded demo bundle: %v", err)
	}
	b := Demo()
	if Demo() != b {
		t.Errorf("Demo() parsed twice; want one shared bundle")
	}
	s := b.Stats()
	if got := s.Items["lexile"] + s.Items["quantile"]; got < 3000 {
		t.Errorf("demo has %d items; want >= 3000", got)
	}
	for _, fw := range []string{"lexile", "quantile"} {
		if n := s.Strands[fw]; n < 4 || n > 5 {
			t.Errorf("%s has %d strands; want 4-5", fw, n)
		}
	}
	if s.Links < 4 || s.Forms < 2 {
		t.Errorf("demo has %d links and %d forms; want >= 4 and >= 2", s.Links, s.Forms)
	}
	if got, want := s.String(), "lexile: 2020 items, 5 strands; quantile: 1520 items, 5 strands; 4 links, 6 forms"; got != want {
		t.Errorf("Stats().String() = %q; want %q", got, want)
	}
}

func TestDemoContent(t *testing.T) {
	t.Parallel()
	b := Demo()
	for _, c := range []struct{ id, fw string }{{"L000123", "lexile"}, {"S000045", "lexile"}, {"Q000001", "quantile"}} {
		it, ok := b.Item(c.id)
		if !ok || it.Framework != c.fw {
			t.Errorf("Item(%s) = %+v, %v; want a %s item", c.id, it, ok, c.fw)
		}
	}
	for _, c := range []struct {
		id, fw, kind string
	}{
		{"STATE-READ-2026", "lexile", LinkLinear}, {"NATL-READ-PT", "lexile", LinkPoints},
		{"STATE-MATH-2026", "quantile", LinkLinear}, {"NATL-MATH-PT", "quantile", LinkPoints},
	} {
		l, ok := b.Link(c.id)
		if !ok || l.Framework != c.fw || l.Kind != c.kind {
			t.Errorf("Link(%s) = %+v, %v; want a %s %s link", c.id, l, ok, c.fw, c.kind)
		}
	}
	f, ok := b.Form("FORM-READ-G3")
	if !ok || len(f.Items) != 30 || f.Framework != "lexile" {
		t.Fatalf("Form(FORM-READ-G3) = %+v, %v; want 30 lexile items", f, ok)
	}
	f.Items[0] = "changed"
	if again, _ := b.Form("FORM-READ-G3"); again.Items[0] == "changed" {
		t.Errorf("Form returned the bundle's own slice; want a copy")
	}
	if _, ok := b.Form("FORM-MATH-G5"); !ok {
		t.Errorf("Form(FORM-MATH-G5) missing")
	}
	// BOY/EOY = MOY ∓ half the yearly growth: lexile grade 3, growth (628 − 320)/2 = 154, half 77.
	for _, c := range []struct {
		tod  string
		want Benchmark
	}{{"BOY", Benchmark{253, 623}}, {"MOY", Benchmark{330, 700}}, {"EOY", Benchmark{407, 777}}} {
		got, ok := b.Benchmark("lexile", 3, c.tod)
		if !ok || got != c.want {
			t.Errorf("Benchmark(lexile, 3, %s) = %v, %v; want %v", c.tod, got, ok, c.want)
		}
	}
	if _, ok := b.Benchmark("lexile", 13, "MOY"); ok {
		t.Errorf("Benchmark(lexile, 13, MOY) found; want none")
	}
	for _, name := range []string{"lexile", "quantile"} {
		fw, ok := b.Framework(name)
		if !ok || fw.prep == nil {
			t.Errorf("Framework(%s) = %v, %v; want a prepared framework", name, fw, ok)
		}
	}
	if _, ok := b.Framework("science"); ok {
		t.Errorf("Framework(science) found; want none")
	}
}

// TestDemoIsCurrent regenerates the bundle and compares it byte for byte with the committed
// demo/ directory, so the committed files are provably the generator's output.
func TestDemoIsCurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := democontent.Write(dir); err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := fs.ReadDir(demoFiles, "demo")
	if err != nil {
		t.Fatal(err)
	}
	// demo/ also holds growth_norms.csv, which demogen fits (TestDemoGrowthNormsAreCurrent).
	if len(gen)+1 != len(committed) {
		t.Errorf("generator writes %d files and the growth norms, demo/ has %d; run go generate ./pkg/measure", len(gen), len(committed))
	}
	for _, e := range gen {
		want, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		got, err := demoFiles.ReadFile("demo/" + e.Name())
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("demo/%s differs from the generator's output (%v); run go generate ./pkg/measure", e.Name(), err)
		}
	}
}

// TestLoadDirMatchesDemo writes the demo files to disk the way a ConfigMap mount looks (hidden
// ..data entries included) and loads them with LoadDir.
func TestLoadDirMatchesDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := democontent.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "..2026_11_22_01_02_03.123"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "..data"), []byte("not,a,bundle"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	want := Demo()
	if len(got.items) != len(want.items) || len(got.links) != len(want.links) ||
		len(got.forms) != len(want.forms) || len(got.benchmarks) != len(want.benchmarks) {
		t.Fatalf("LoadDir stats %v; want %v", got.Stats(), want.Stats())
	}
	for id, it := range want.items {
		if !reflect.DeepEqual(got.items[id], it) {
			t.Errorf("item %s = %+v; want %+v", id, got.items[id], it)
		}
	}
	for k, bm := range want.benchmarks {
		if got.benchmarks[k] != bm {
			t.Errorf("benchmark %v = %v; want %v", k, got.benchmarks[k], bm)
		}
	}
	for id, l := range want.links {
		g := got.links[id]
		if g.Min != l.Min || g.Max != l.Max || g.Slope != l.Slope || len(g.Points) != len(l.Points) || g.LinkingError != l.LinkingError {
			t.Errorf("link %s = %+v; want %+v", id, g, l)
		}
	}
	for name, f := range want.frameworks {
		g := got.frameworks[name]
		if g.Display(1234) != f.Display(1234) || g.Expected(500, 100) != f.Expected(500, 100) {
			t.Errorf("framework %s differs after LoadDir", name)
		}
	}
	if _, err := LoadDir(filepath.Join(dir, "absent")); err == nil {
		t.Errorf("LoadDir(absent dir) = nil error; want one")
	}
}

// TestTimeOfYear: the three times of year in any case, in their upper-case form; nothing else.
func TestTimeOfYear(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"BOY", "BOY", true}, {"boy", "BOY", true}, {"Moy", "MOY", true}, {"eOy", "EOY", true},
		{"", "", false}, {"BOYS", "", false}, {" MOY", "", false}, {"fall", "", false}, {"ＭＯＹ", "", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			if got, ok := TimeOfYear(tc.in); got != tc.want || ok != tc.ok {
				t.Errorf("TimeOfYear(%q) = %q, %t; want %q, %t", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}
