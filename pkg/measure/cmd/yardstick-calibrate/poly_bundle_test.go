package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// TestRunPolytomousBundle: the bundle written from a partial credit calibration loads, each
// polytomous item with its steps (to 0.01 units, as the report gives them) and its location as
// the difficulty; a second run anchored on it places the same items at the same steps.
func TestRunPolytomousBundle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join("..", "..", "testdata", "calibrate", "pcm_mixed.csv")
	out, rep := filepath.Join(dir, "bundle"), filepath.Join(dir, "report.json")
	if _, _, err := call(t, "-framework", "quantile", "-mean", "700", "-out", out, "-report", rep, data); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Items []struct {
			ID         string
			Difficulty float64
			Steps      []struct{ Difficulty float64 }
		}
	}
	readJSON(t, rep, &r)
	b, err := measure.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	round := func(v float64) float64 { return math.Round(v*100) / 100 }
	for _, it := range r.Items {
		got, ok := b.Item(it.ID)
		want := measure.Item{ID: it.ID, Framework: "quantile", Strand: "all", Difficulty: round(it.Difficulty)}
		for _, s := range it.Steps {
			want.Steps = append(want.Steps, round(s.Difficulty))
		}
		if !ok || !reflect.DeepEqual(got, want) || !got.Polytomous() {
			t.Errorf("bundle item %s: %+v; want %+v", it.ID, got, want)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// TestRunPolytomousAnchors: a second run anchored on the first bundle, with half the items under
// new ids, puts the new ones where the first run put them (to the bundle's 0.01 units).
func TestRunPolytomousAnchors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join("..", "..", "testdata", "calibrate", "pcm_mixed.csv")
	first := filepath.Join(dir, "first")
	if _, _, err := call(t, "-framework", "quantile", "-mean", "700", "-out", first, "-report", filepath.Join(dir, "r1.json"), data); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(raw), "\n")
	for i := 11; i <= 20; i++ {
		head = strings.Replace(head, fmt.Sprintf(",I%02d", i), fmt.Sprintf(",J%02d", i), 1)
	}
	second := write(t, dir, "second.csv", head+"\n"+rest)
	out := filepath.Join(dir, "second")
	if _, _, err := call(t, "-framework", "quantile", "-anchors", first, "-out", out, "-report", filepath.Join(dir, "r2.json"), second); err != nil {
		t.Fatal(err)
	}
	var r struct{ Anchors []measure.Anchor }
	readJSON(t, filepath.Join(dir, "r2.json"), &r)
	if len(r.Anchors) != 10 {
		t.Fatalf("%d anchors; want 10", len(r.Anchors))
	}
	for _, a := range r.Anchors {
		if math.Abs(a.Displacement) > 0.01 {
			t.Errorf("anchor %+v; want no displacement (±0.01)", a)
		}
	}
	b1, _ := measure.LoadDir(first)
	b2, err := measure.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := 11; i <= 20; i++ {
		old, _ := b1.Item(fmt.Sprintf("I%02d", i))
		got, ok := b2.Item(fmt.Sprintf("J%02d", i))
		if !ok || len(got.Steps) != len(old.Steps) || math.Abs(got.Difficulty-old.Difficulty) > 0.015 {
			t.Errorf("J%02d: %+v; want I%02d's %+v", i, got, i, old)
			continue
		}
		for h := range got.Steps {
			if math.Abs(got.Steps[h]-old.Steps[h]) > 0.015 {
				t.Errorf("J%02d step %d: %v; want %v", i, h+1, got.Steps[h], old.Steps[h])
			}
		}
	}
}
