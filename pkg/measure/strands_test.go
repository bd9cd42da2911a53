package measure

import (
	"math"
	"testing"
)

func TestStrands(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	item := func(id, strand string, d float64) Item {
		return Item{ID: id, Framework: "lexile", Strand: strand, Difficulty: d}
	}
	answers := []Answer{
		{Item: item("1", "Vocabulary", 400), Correct: true},
		{Item: item("2", "Key Ideas", 500), Correct: false},
		{Item: item("3", "Vocabulary", 600), Correct: true},
		{Item: item("4", "Craft", 900), Correct: false},
		{Item: item("5", "Key Ideas", 700), Correct: false},
		{Item: item("6", "Vocabulary", 800), Correct: true},
	}
	bench := Benchmark{Lower: 450, Upper: 650}
	got := f.Strands(answers, 560, bench)
	wantOrder := []string{"Vocabulary", "Key Ideas", "Craft"}
	if len(got) != len(wantOrder) {
		t.Fatalf("%d strands; want %d", len(got), len(wantOrder))
	}
	for i, s := range got {
		if s.Name != wantOrder[i] {
			t.Errorf("strand %d = %q; want %q (order of first appearance)", i, s.Name, wantOrder[i])
		}
		var mine []Answer
		for _, a := range answers {
			if a.Item.Strand == s.Name {
				mine = append(mine, a)
			}
		}
		want, err := f.Bayes(TestOf(mine), Normal{Mean: 560, SD: f.StrandSpread})
		if err != nil {
			t.Fatal(err)
		}
		if s.Ability != want.Ability || s.Uncertainty != want.Uncertainty {
			t.Errorf("%s = %v ± %v; want the EAP %v", s.Name, s.Ability, s.Uncertainty, want)
		}
		if s.Uncertainty >= f.StrandSpread {
			t.Errorf("%s posterior SD %v is not below the prior's %v", s.Name, s.Uncertainty, f.StrandSpread)
		}
		if s.Category != bench.Category(s.Ability) {
			t.Errorf("%s category %d; want %d", s.Name, s.Category, bench.Category(s.Ability))
		}
	}
	if got[0].Ability <= 560 || got[1].Ability >= 560 {
		t.Errorf("Vocabulary (3 of 3 right) %v and Key Ideas (0 of 2) %v should straddle the overall 560", got[0].Ability, got[1].Ability)
	}
	if len(f.Strands(nil, 500, bench)) != 0 {
		t.Errorf("no answers: want no strands")
	}
	// A strand that cannot be scored keeps the overall ability and the prior spread.
	bad := f.Strands([]Answer{{Item: item("x", "S", math.NaN()), Correct: true}}, 500, bench)
	if len(bad) != 1 || bad[0].Ability != 500 || bad[0].Uncertainty != f.StrandSpread || bad[0].Category != 2 {
		t.Errorf("unscorable strand = %+v; want the overall 500 ± %v, category 2", bad, f.StrandSpread)
	}
}

func TestBenchmarkCategory(t *testing.T) {
	t.Parallel()
	b := Benchmark{Lower: 300, Upper: 700}
	for _, c := range []struct {
		v    float64
		want int
	}{
		{299.4, 1}, {299.5, 2}, {300, 2}, {699.4, 2}, {699.5, 3}, {700, 3}, {-1e9, 1}, {1e9, 3},
	} {
		if got := b.Category(c.v); got != c.want {
			t.Errorf("Category(%v) with [300, 700] = %d; want %d", c.v, got, c.want)
		}
	}
}
