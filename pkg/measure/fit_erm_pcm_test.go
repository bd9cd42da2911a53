package measure

import (
	"encoding/csv"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPersonFitMatchesERmPCM: at eRm's own abilities (thetapar) and thresholds of a PCM fit,
// PersonFit equals eRm's personfit within 1e-6 for every person of three simulated data sets
// (testdata/erm/personfit_pcm.R): one mixing dichotomous, 0–2 and 0–3 items, one of ten 0–3 items,
// one with disordered steps, a 0–4 item and persons answering at random.
func TestPersonFitMatchesERmPCM(t *testing.T) {
	t.Parallel()
	f := logitFramework(t)
	cases := readERmPersonFitPCM(t)
	if len(cases) != 3 {
		t.Fatalf("got %d cases; want 3", len(cases))
	}
	flagged := 0
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if len(c.persons) < 100 {
				t.Fatalf("%d persons; want at least 100", len(c.persons))
			}
			poly := 0
			for _, st := range c.steps {
				if len(st) >= 2 {
					poly++
				}
			}
			if poly == 0 {
				t.Fatal("no polytomous item")
			}
			for _, p := range c.persons {
				answers := make([]Answer, len(c.steps))
				for i, st := range c.steps {
					item := Item{Difficulty: mean(st)}
					if len(st) >= 2 {
						item.Steps = st
					}
					answers[i] = Answer{Item: item, Score: int(p.responses[i] - '0')}
				}
				got, err := f.PersonFit(p.theta, answers)
				if err != nil {
					t.Fatalf("%s: %v", p.id, err)
				}
				for _, v := range []struct {
					what      string
					got, want float64
				}{{"infit", got.Infit, p.infit}, {"outfit", got.Outfit, p.outfit},
					{"infitZ", got.InfitZ, p.infitZ}, {"outfitZ", got.OutfitZ, p.outfitZ}} {
					if math.Abs(v.got-v.want) > 1e-6 {
						t.Errorf("%s %s: got %.10f; want eRm's %.10f", p.id, v.what, v.got, v.want)
					}
				}
				if got.Flag != "" {
					flagged++
				}
			}
		})
	}
	if flagged == 0 {
		t.Error("no person of the reference sets is flagged; the table does not exercise the flag")
	}
}

// TestPersonFitPolytomousBoundaries: no points and every item's maximum have no fit; a score
// above an item's maximum or below 0 is an error; a one-step item is the dichotomous item.
func TestPersonFitPolytomousBoundaries(t *testing.T) {
	t.Parallel()
	f := logitFramework(t)
	poly := Item{Difficulty: 0, Steps: []float64{-1, 1}}
	dich := Item{Difficulty: 0.5}
	for _, tc := range []struct {
		name    string
		answers []Answer
		want    string
	}{
		{"no points", []Answer{{Item: poly}, {Item: dich}}, ErrExtremeScore.Error()},
		{"every maximum", []Answer{{Item: poly, Score: 2}, {Item: dich, Correct: true}}, ErrExtremeScore.Error()},
		{"above the maximum", []Answer{{Item: poly, Score: 3}, {Item: dich}}, "answer 0: score 3 is outside 0 … 2"},
		{"below 0", []Answer{{Item: poly, Score: 1}, {Item: dich, Score: -1}}, "answer 1: score -1 is outside 0 … 1"},
		{"NaN step", []Answer{{Item: Item{Steps: []float64{0, math.NaN()}}, Score: 1}, {Item: dich}}, "step 2: NaN is not finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := f.PersonFit(0.2, tc.answers)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := f.PersonFit(0, []Answer{{Item: poly, Score: 1}, {Item: dich, Correct: true}}); err != nil {
		t.Errorf("one point of two items: got %v; want a fit", err)
	}
	// A one-step item answers as the dichotomous item, and a middle score on a 0–2 item fits
	// differently from the same item's extremes.
	a := []Answer{{Item: Item{Difficulty: -0.3}, Correct: true}, {Item: Item{Difficulty: 0.4}}, {Item: Item{Difficulty: 0.1}, Correct: true}}
	b := []Answer{{Item: Item{Difficulty: -0.3, Steps: []float64{-0.3}}, Score: 1}, {Item: Item{Difficulty: 0.4, Steps: []float64{0.4}}}, {Item: Item{Difficulty: 0.1, Steps: []float64{0.1}}, Score: 1}}
	fa, errA := f.PersonFit(0.25, a)
	fb, errB := f.PersonFit(0.25, b)
	if errA != nil || errB != nil || fa != fb {
		t.Errorf("one-step items: got %+v (%v); want %+v (%v)", fb, errB, fa, errA)
	}
	if errors.Is(errA, ErrExtremeScore) {
		t.Error("a mixed pattern is not extreme")
	}
}

// logitFramework is a framework in logits (s = 1, m = 0.5: λ = 0), eRm's scale.
func logitFramework(t *testing.T) *Framework {
	t.Helper()
	f := &Framework{Name: "logit", Label: "x", NegativePrefix: "-", UnitsPerLogit: 1, SuccessAtMatch: 0.5,
		DisplayMin: -10, DisplayMax: 10, GradeMax: make([]float64, Grades), Norm: make([]float64, Grades),
		GrowthSD: 0, PopulationSD: 1, ExtremeAdjust: 0.3, StrandSpread: 1}
	for g := range f.Norm {
		f.Norm[g], f.GradeMax[g] = float64(g), 10
	}
	if err := f.Prepare(); err != nil {
		t.Fatal(err)
	}
	return f
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

type ermPCMCase struct {
	steps   [][]float64
	persons []ermPerson
}

func readERmPersonFitPCM(t *testing.T) map[string]*ermPCMCase {
	t.Helper()
	fh, err := os.Open("testdata/erm/personfit_pcm.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r := csv.NewReader(fh)
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("personfit_pcm.csv: %v", err)
		}
		return v
	}
	cases := map[string]*ermPCMCase{}
	for _, row := range rows[1:] {
		c := cases[row[0]]
		if c == nil {
			c = &ermPCMCase{}
			cases[row[0]] = c
		}
		switch row[1] {
		case "item":
			var st []float64
			for _, v := range strings.Split(row[3], ";") {
				st = append(st, num(v))
			}
			c.steps = append(c.steps, st)
		case "person":
			if len(row[4]) != len(c.steps) {
				t.Fatalf("personfit_pcm.csv: %s %s has %d responses for %d items", row[0], row[2], len(row[4]), len(c.steps))
			}
			c.persons = append(c.persons, ermPerson{id: row[2], theta: num(row[3]), responses: row[4],
				infit: num(row[5]), outfit: num(row[6]), infitZ: num(row[7]), outfitZ: num(row[8])})
		default:
			t.Fatalf("personfit_pcm.csv: kind %q", row[1])
		}
	}
	return cases
}
