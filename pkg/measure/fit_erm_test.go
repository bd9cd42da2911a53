package measure

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"testing"
)

// TestPersonFitMatchesERm: at eRm's own abilities (thetapar) and item difficulties (−betapar),
// PersonFit equals eRm's personfit within 1e-6 for every person of four simulated data sets
// (testdata/erm/personfit.R), one of them with guessers and one with blanks (an answer list
// holds only the items answered).
func TestPersonFitMatchesERm(t *testing.T) {
	t.Parallel()
	f := &Framework{Name: "logit", Label: "x", NegativePrefix: "-", UnitsPerLogit: 1, SuccessAtMatch: 0.5,
		DisplayMin: -10, DisplayMax: 10, GradeMax: make([]float64, Grades), Norm: make([]float64, Grades),
		GrowthSD: 0, PopulationSD: 1, ExtremeAdjust: 0.3, StrandSpread: 1}
	for g := range f.Norm {
		f.Norm[g], f.GradeMax[g] = float64(g), 10
	}
	if err := f.Prepare(); err != nil {
		t.Fatal(err)
	}
	cases := readERmPersonFit(t)
	if len(cases) != 4 {
		t.Fatalf("got %d cases; want 4", len(cases))
	}
	flagged := 0
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if len(c.persons) < 100 {
				t.Fatalf("%d persons; want at least 100", len(c.persons))
			}
			for _, p := range c.persons {
				var answers []Answer
				for i, r := range p.responses {
					if r != '.' {
						answers = append(answers, Answer{Item: Item{Difficulty: c.difficulty[i]}, Correct: r == '1'})
					}
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

type ermPerson struct {
	id                             string
	theta                          float64
	responses                      string
	infit, outfit, infitZ, outfitZ float64
}

type ermCase struct {
	difficulty []float64
	persons    []ermPerson
}

func readERmPersonFit(t *testing.T) map[string]*ermCase {
	t.Helper()
	fh, err := os.Open("testdata/erm/personfit.csv")
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
			t.Fatalf("personfit.csv: %v", err)
		}
		return v
	}
	cases := map[string]*ermCase{}
	for _, row := range rows[1:] {
		c := cases[row[0]]
		if c == nil {
			c = &ermCase{}
			cases[row[0]] = c
		}
		switch row[1] {
		case "item":
			c.difficulty = append(c.difficulty, num(row[3]))
		case "person":
			if len(row[4]) != len(c.difficulty) {
				t.Fatalf("personfit.csv: %s %s has %d responses for %d items", row[0], row[2], len(row[4]), len(c.difficulty))
			}
			c.persons = append(c.persons, ermPerson{id: row[2], theta: num(row[3]), responses: row[4],
				infit: num(row[5]), outfit: num(row[6]), infitZ: num(row[7]), outfitZ: num(row[8])})
		default:
			t.Fatalf("personfit.csv: kind %q", row[1])
		}
	}
	return cases
}
