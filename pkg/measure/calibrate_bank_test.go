package measure

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// bankData: 300 persons × 12 items (ids given) in 3 overlapping booklets.
func bankData(ids []string) *Responses {
	rng := rand.New(rand.NewPCG(3, 4))
	beta := []float64{-1.6, -1.2, -0.9, -0.5, -0.2, 0, 0.1, 0.4, 0.7, 1, 1.3, 1.7}
	r := simulate(rng, 300, beta, 0, 1, cyclicBooklets(12, 3))
	r.Items = ids
	return r
}

func TestCalibrateBankNewItems(t *testing.T) {
	t.Parallel()
	ids := []string{"N01", "N02", "N03", "N04", "N05", "N06", "N07", "N08", "N09", "N10", "N11", "N12"}
	strands := map[string]string{}
	for i, id := range ids {
		strands[id] = []string{"Algebra", "Geometry"}[i%2]
	}
	rep, items, err := CalibrateBank(context.Background(), BankJob{Responses: bankData(ids), Framework: "quantile", Base: Demo(), Mean: 700, Strands: strands})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Items) != 12 || len(items) != 12 || len(rep.Anchors) != 0 || len(rep.Dropped) != 0 || rep.Persons == 0 || rep.Iterations == 0 {
		t.Fatalf("report %+v, %d new items; want 12 items, no anchors or drops", rep, len(items))
	}
	mean := 0.0
	for k, it := range items {
		r := rep.Items[k]
		mean += it.Difficulty / 12
		if it.ID != ids[k] || it.Framework != "quantile" || it.Strand != strands[it.ID] || it.Difficulty != r.Difficulty || r.ID != it.ID {
			t.Errorf("item %d: %+v, report %+v", k, it, r)
		}
		if math.Abs(r.Difficulty-(700+180*r.Logit)) > 1e-9 { // quantile: m = 0.5, so λ = 0
			t.Errorf("%s difficulty %v; want 700 + 180·%v", r.ID, r.Difficulty, r.Logit)
		}
	}
	if math.Abs(mean-700) > 1e-9 {
		t.Errorf("mean %v; want 700", mean)
	}
	_, items, err = CalibrateBank(context.Background(), BankJob{Responses: bankData(ids), Framework: "lexile", Base: Demo(), Mean: 700})
	if err != nil || items[0].Strand != DefaultStrand || DefaultStrand != "all" {
		t.Errorf("without strands: %v, %+v; want strand \"all\"", err, items[0])
	}
}

// TestCalibrateBankAnchored: items of the data that the base holds are anchors; they fix the
// shift, are reported with their displacement and are not new items.
func TestCalibrateBankAnchored(t *testing.T) {
	t.Parallel()
	demo := Demo()
	ids := []string{"Q000001", "Q000002", "Q000003", "Q000004", "N05", "N06", "N07", "N08", "N09", "N10", "N11", "N12"}
	rep, items, err := CalibrateBank(context.Background(), BankJob{Responses: bankData(ids), Framework: "quantile", Base: demo, Anchored: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 8 || items[0].ID != "N05" || len(rep.Anchors) != 4 || len(rep.Items) != 12 {
		t.Fatalf("%d new items (first %+v), anchors %+v; want 8 new and 4 anchors", len(items), items[0], rep.Anchors)
	}
	sumBank, sumCal, sumDisp := 0.0, 0.0, 0.0
	for k, a := range rep.Anchors {
		it, _ := demo.Item(a.ID)
		if a.ID != ids[k] || a.Bank != it.Difficulty || a.Calibrated != rep.Items[k].Difficulty {
			t.Errorf("anchor %+v; want bank %v and calibrated %v", a, it.Difficulty, rep.Items[k].Difficulty)
		}
		sumBank += a.Bank
		sumCal += a.Calibrated
		sumDisp += a.Displacement
	}
	if math.Abs(sumBank-sumCal) > 1e-9 || math.Abs(sumDisp) > 1e-9 {
		t.Errorf("anchor means: bank %v, calibrated %v, displacements sum %v; want equal means", sumBank/4, sumCal/4, sumDisp)
	}
}

func TestCalibrateBankRefuses(t *testing.T) {
	t.Parallel()
	ids := []string{"N01", "N02", "N03", "N04", "N05", "N06", "N07", "N08", "N09", "N10", "N11", "N12"}
	withIDs := func(replace map[int]string) []string {
		out := append([]string(nil), ids...)
		for k, v := range replace {
			out[k] = v
		}
		return out
	}
	for _, c := range []struct {
		name string
		job  BankJob
		want string
	}{
		{"unknown framework", BankJob{Framework: "science", Mean: 1}, `the bundle has no framework "science" (it has lexile, quantile)`},
		{"id taken", BankJob{Framework: "quantile", Mean: 1, Responses: bankData(withIDs(map[int]string{0: "L000001", 3: "Q000009"}))},
			"2 item ids of the data are already in the bundle: L000001, Q000009"},
		{"anchor of another framework", BankJob{Framework: "quantile", Anchored: true, Responses: bankData(withIDs(map[int]string{0: "L000001", 1: "Q000001"}))},
			"1 items of the data are items of another framework than quantile in the anchor bundle: L000001"},
		{"no anchors", BankJob{Framework: "quantile", Anchored: true}, "no item of the data is a quantile item of the anchor bundle"},
		{"strands", BankJob{Framework: "quantile", Mean: 1, Strands: map[string]string{"N01": "A", "ZZ": "B"}},
			"strands: 1 items are not in the response data: ZZ\nstrands: no strand for 11 new items: N02, N03, N04, N05, N06, N07, N08, N09, N10, N11 and 1 more"},
		{"every anchor dropped", BankJob{Framework: "quantile", Anchored: true, Responses: allRight(withIDs(map[int]string{0: "Q000001"}))},
			"every anchor was dropped (Q000001: answered correctly by all 300 persons who took it)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.job.Base = Demo()
			if c.job.Responses == nil {
				c.job.Responses = bankData(ids)
			}
			rep, items, err := CalibrateBank(context.Background(), c.job)
			if err == nil || rep != nil || items != nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want an error containing %q", err, c.want)
			}
		})
	}
}

// allRight is bankData with its first item answered right by everybody.
func allRight(ids []string) *Responses {
	r := bankData(ids)
	for _, row := range r.Cells {
		row[0] = 1
	}
	return r
}

func TestExtendBundle(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "bundle")
	items := []Item{
		{ID: "N1", Framework: "quantile", Strand: "all", Difficulty: 612.345},
		{ID: "N2", Framework: "quantile", Strand: "Geometry, solid", Difficulty: -20},
		{ID: "N3", Framework: "lexile", Strand: "Vocabulary", Difficulty: 900.005}, // a declared strand
	}
	if err := ExtendBundle(DemoFiles(), items, dir); err != nil {
		t.Fatal(err)
	}
	b, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []Item{
		{ID: "N1", Framework: "quantile", Strand: "all", Difficulty: 612.35},
		{ID: "N2", Framework: "quantile", Strand: "Geometry, solid", Difficulty: -20},
		{ID: "N3", Framework: "lexile", Strand: "Vocabulary", Difficulty: 900.01},
	} {
		if got, ok := b.Item(want.ID); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("item %s: got %+v; want %+v", want.ID, got, want)
		}
	}
	demo, q := Demo().Stats(), b.Stats()
	if q.Items["quantile"] != demo.Items["quantile"]+2 || q.Strands["quantile"] != demo.Strands["quantile"]+2 || q.Strands["lexile"] != demo.Strands["lexile"] || q.Links != demo.Links || q.Forms != demo.Forms {
		t.Errorf("stats %v; want the demo's %v plus 2 quantile items and strands", q, demo)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Error("the demo's README was copied; want CSV files only")
	}
	// The new bundle can be a base in turn; its items then collide.
	again := filepath.Join(t.TempDir(), "again")
	err = ExtendBundle(os.DirFS(dir), []Item{{ID: "N1", Framework: "quantile", Strand: "all", Difficulty: 1}}, again)
	if err == nil || !strings.Contains(err.Error(), "item N1 is already in the bundle") {
		t.Errorf("collision: got %v", err)
	}
	if _, err := os.Stat(again); err == nil {
		t.Error("a failed ExtendBundle left its directory")
	}
}

func TestExtendBundleRefuses(t *testing.T) {
	t.Parallel()
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ok := Item{ID: "N1", Framework: "quantile", Strand: "all", Difficulty: 1}
	for _, c := range []struct {
		name  string
		items []Item
		dir   string
		want  string
	}{
		{"taken", []Item{{ID: "Q000001", Framework: "quantile", Strand: "all"}}, "", "item Q000001 is already in the bundle (quantile"},
		{"twice", []Item{ok, ok}, "", "item N1 is given twice"},
		{"framework", []Item{{ID: "N9", Framework: "science", Strand: "all"}}, "", `item N9: the bundle has no framework "science"`},
		{"spaces", []Item{{ID: "N9 ", Framework: "quantile", Strand: "all"}}, "", "id and strand must be non-empty"},
		{"no strand", []Item{{ID: "N9", Framework: "quantile"}}, "", "id and strand must be non-empty"},
		{"NaN", []Item{{ID: "N9", Framework: "quantile", Strand: "all", Difficulty: math.NaN()}}, "", "difficulty NaN is not a number"},
		{"dir not empty", []Item{ok}, full, "exists and is not empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := c.dir
			if dir == "" {
				dir = filepath.Join(t.TempDir(), "out")
			}
			err := ExtendBundle(DemoFiles(), c.items, dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want an error containing %q", err, c.want)
			}
			if c.dir == "" {
				if _, err := os.Stat(dir); err == nil {
					t.Error("the output directory was created")
				}
			}
		})
	}
	// An empty directory is filled.
	empty := t.TempDir()
	if err := ExtendBundle(DemoFiles(), []Item{ok}, empty); err != nil {
		t.Fatalf("empty directory: %v", err)
	}
	if _, err := LoadDir(empty); err != nil {
		t.Error(err)
	}
}
