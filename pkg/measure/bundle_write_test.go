package measure

import (
	"encoding/csv"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// readStepsColumn is this test's own reader of items.csv's steps column (the bundle loader's is
// tested with the loader): id → the steps of each row that has any, and the header.
func readStepsColumn(t *testing.T, data []byte) (header []string, difficulty map[string]float64, steps map[string][]float64) {
	t.Helper()
	r := csv.NewReader(strings.NewReader(string(data)))
	r.Comment = '#'
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header = recs[0]
	difficulty, steps = map[string]float64{}, map[string][]float64{}
	for _, rec := range recs[1:] {
		if len(rec) != 4 && len(rec) != 5 {
			t.Fatalf("row %v: %d fields; want 4 or 5", rec, len(rec))
		}
		if difficulty[rec[0]], err = strconv.ParseFloat(rec[3], 64); err != nil {
			t.Fatal(err)
		}
		if len(rec) == 5 && rec[4] != "" {
			for _, f := range strings.Split(rec[4], ";") {
				v, err := strconv.ParseFloat(f, 64)
				if err != nil {
					t.Fatalf("row %v: step %q: %v", rec, f, err)
				}
				steps[rec[0]] = append(steps[rec[0]], v)
			}
		}
	}
	return header, difficulty, steps
}

// TestExtendItemsSteps: polytomous items add the steps column to a header without one (after
// its comments, CRLF kept) and are written `a;b;c` to 0.01 units with their location as the
// difficulty (within 0.5 of the rounded steps' mean, as the loader requires); the base's rows and
// the new 0/1 items keep four fields; a header that has the column is left as it is; without
// polytomous items the file is written exactly as before.
func TestExtendItemsSteps(t *testing.T) {
	t.Parallel()
	base := "# a comment, with a comma\nid,framework,strand,difficulty\nQ1,quantile,all,100\n"
	poly := Item{ID: "P1", Framework: "quantile", Strand: "all", Difficulty: 520.004, Steps: []float64{410.004, 519.996, 630.011}}
	dich := Item{ID: "D1", Framework: "quantile", Strand: "all", Difficulty: 333.333}
	got, err := extendItems([]byte(base), []Item{poly, dich})
	if err != nil {
		t.Fatal(err)
	}
	want := "# a comment, with a comma\nid,framework,strand,difficulty,steps\nQ1,quantile,all,100\n" +
		"# 2 items added by calibration\nP1,quantile,all,520,410;520;630.01\nD1,quantile,all,333.33\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	header, difficulty, steps := readStepsColumn(t, got)
	if !reflect.DeepEqual(header, append(append([]string(nil), itemsHeader...), "steps")) ||
		!reflect.DeepEqual(steps, map[string][]float64{"P1": {410, 520, 630.01}}) || math.Abs(difficulty["P1"]-stepMean(steps["P1"])) > 0.5 {
		t.Errorf("read back: header %v, steps %v, difficulties %v", header, steps, difficulty)
	}
	// CRLF and a header that has the column already.
	got, err = extendItems([]byte("id,framework,strand,difficulty\r\nQ1,quantile,all,100\r\n"), []Item{poly})
	if want := "id,framework,strand,difficulty,steps\r\nQ1,quantile,all,100\r\n# 1 items added by calibration\nP1,quantile,all,520,410;520;630.01\n"; err != nil || string(got) != want {
		t.Errorf("CRLF: got %q, %v; want %q", got, err, want)
	}
	withCol := "id,framework,strand,difficulty,steps\nQ1,quantile,all,100,\n"
	got, err = extendItems([]byte(withCol), []Item{poly, dich})
	if want := withCol + "# 2 items added by calibration\nP1,quantile,all,520,410;520;630.01\nD1,quantile,all,333.33\n"; err != nil || string(got) != want {
		t.Errorf("header with steps: got %q, %v; want %q", got, err, want)
	}
	// Only 0/1 items: as before, whatever the header.
	got, err = extendItems([]byte(base), []Item{dich})
	if want := base + "# 1 items added by calibration\nD1,quantile,all,333.33\n"; err != nil || string(got) != want {
		t.Errorf("0/1 items: got %q, %v; want %q", got, err, want)
	}
	if _, err := extendItems([]byte("id,framework,difficulty\n"), []Item{poly}); err == nil ||
		err.Error() != `items.csv of the base bundle: header "id,framework,difficulty"; want "id,framework,strand,difficulty,steps,program" (the last 2 optional)` {
		t.Errorf("bad base header: got %v", err)
	}
}

// TestExtendItemsProgram: items of a program add the program column (after steps, when the header
// has it); steps added to a header that has the program column move each row's program to its
// column; items without a program are written as before.
func TestExtendItemsProgram(t *testing.T) {
	t.Parallel()
	poly := Item{ID: "P1", Framework: "quantile", Strand: "all", Difficulty: 520, Steps: []float64{410, 630}, Program: "acme"}
	dich := Item{ID: "D1", Framework: "quantile", Strand: "all", Difficulty: 333, Program: "beta"}
	shared := Item{ID: "S1", Framework: "quantile", Strand: "all", Difficulty: 100}
	tests := []struct {
		name, base string
		items      []Item
		want       string
	}{
		{"program added", "id,framework,strand,difficulty\nQ1,quantile,all,100\n", []Item{dich, shared},
			"id,framework,strand,difficulty,program\nQ1,quantile,all,100\n# 2 items added by calibration\nD1,quantile,all,333,beta\nS1,quantile,all,100\n"},
		{"program after steps", "id,framework,strand,difficulty,steps\nQ1,quantile,all,100,\n", []Item{poly, dich},
			"id,framework,strand,difficulty,steps,program\nQ1,quantile,all,100,\n# 2 items added by calibration\nP1,quantile,all,520,410;630,acme\nD1,quantile,all,333,,beta\n"},
		{"steps before a program", "# c\nid,framework,strand,difficulty,program\nQ1,quantile,all,100,acme\nQ2,quantile,all,200\n", []Item{poly},
			"# c\nid,framework,strand,difficulty,steps,program\nQ1,quantile,all,100,,acme\nQ2,quantile,all,200\n# 1 items added by calibration\nP1,quantile,all,520,410;630,acme\n"},
		{"a program column kept", "id,framework,strand,difficulty,program\nQ1,quantile,all,100,acme\n", []Item{shared},
			"id,framework,strand,difficulty,program\nQ1,quantile,all,100,acme\n# 1 items added by calibration\nS1,quantile,all,100\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := extendItems([]byte(tt.base), tt.items)
			if err != nil || string(got) != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if err := ExtendBundle(DemoFiles(), []Item{{ID: "QX1", Framework: "quantile", Strand: "Geometry", Difficulty: 700, Program: "Acme"}}, t.TempDir()+"/b"); err == nil ||
		!strings.Contains(err.Error(), `item QX1: program "Acme" must be`) {
		t.Errorf("a bad program: got %v", err)
	}
}

// TestExtendBundleRefusesSteps: a step that is not a number, or a difficulty that is not the mean
// of the steps within 0.5 (both sides of the bound), is refused before anything is written.
func TestExtendBundleRefusesSteps(t *testing.T) {
	t.Parallel()
	if maxStepsMeanGap != 0.5 {
		t.Errorf("maxStepsMeanGap = %v; want 0.5 (the loader's bound)", maxStepsMeanGap)
	}
	for _, c := range []struct {
		name  string
		item  Item
		want  string
		fails bool
	}{
		{"NaN step", Item{Difficulty: 1, Steps: []float64{0, math.NaN()}}, "item N1: steps [0 NaN] are not all numbers", true},
		{"infinite step", Item{Difficulty: 1, Steps: []float64{math.Inf(1), 0}}, "item N1: steps [+Inf 0] are not all numbers", true},
		{"off the mean", Item{Difficulty: 500.51, Steps: []float64{400, 600}}, "item N1: difficulty 500.51 is not the mean of its steps [400 600] (500, within 0.5)", true},
		{"at the bound", Item{Difficulty: 500.5, Steps: []float64{400, 600}}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			it := c.item
			it.ID, it.Framework, it.Strand = "N1", "quantile", "all"
			dir := filepath.Join(t.TempDir(), "out")
			err := ExtendBundle(DemoFiles(), []Item{it}, dir)
			if c.fails && (err == nil || err.Error() != c.want) {
				t.Errorf("got %v; want %q", err, c.want)
			}
			if !c.fails && err != nil && strings.Contains(err.Error(), "mean of its steps") {
				t.Errorf("got %v; want the item accepted by the writer", err)
			}
		})
	}
}
