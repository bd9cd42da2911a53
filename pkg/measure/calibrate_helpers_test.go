package measure

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// simulate draws Rasch responses: persons with logit abilities from N(mean, sd²), items of the
// given logit difficulties; answered(p, i) says whether person p took item i (else Missing).
func simulate(rng *rand.Rand, persons int, beta []float64, mean, sd float64, answered func(p, i int) bool) *Responses {
	r := &Responses{Items: make([]string, len(beta))}
	for i := range beta {
		r.Items[i] = fmt.Sprintf("X%03d", i+1)
	}
	for p := 0; p < persons; p++ {
		theta := mean + sd*rng.NormFloat64()
		row := make([]int8, len(beta))
		for i, b := range beta {
			switch {
			case !answered(p, i):
				row[i] = Missing
			case rng.Float64() < 1/(1+math.Exp(b-theta)):
				row[i] = 1
			}
		}
		r.Persons = append(r.Persons, fmt.Sprintf("P%05d", p+1))
		r.Cells = append(r.Cells, row)
	}
	return r
}

// simulatePCM draws partial credit responses: persons with logit abilities from N(mean, sd²),
// item i with the step logits steps[i] (scored 0 … len(steps[i])); answered(p, i) says whether
// person p took item i (else Missing).
func simulatePCM(rng *rand.Rand, persons int, steps [][]float64, mean, sd float64, answered func(p, i int) bool) *Responses {
	r := &Responses{Items: make([]string, len(steps))}
	for i := range steps {
		r.Items[i] = fmt.Sprintf("X%03d", i+1)
	}
	for p := 0; p < persons; p++ {
		theta := mean + sd*rng.NormFloat64()
		row := make([]int8, len(steps))
		for i, st := range steps {
			if !answered(p, i) {
				row[i] = Missing
				continue
			}
			weights := make([]float64, len(st)+1)
			cum, sum := 0.0, 1.0
			weights[0] = 1
			for k, d := range st {
				cum += theta - d
				weights[k+1] = math.Exp(cum)
				sum += weights[k+1]
			}
			u := rng.Float64() * sum
			x := 0
			for x < len(st) && u > weights[x] {
				u -= weights[x]
				x++
			}
			row[i] = int8(x)
		}
		r.Persons = append(r.Persons, fmt.Sprintf("P%05d", p+1))
		r.Cells = append(r.Cells, row)
	}
	return r
}

// cyclicBooklets: nBooklets booklets over nBooklets equal blocks of items; booklet b (person p
// takes booklet p mod nBooklets) holds blocks b and b+1 (cyclically), so neighbouring booklets
// share a block and the design connects.
func cyclicBooklets(items, nBooklets int) func(p, i int) bool {
	size := items / nBooklets
	return func(p, i int) bool {
		b, block := p%nBooklets, i/size
		return block == b || block == (b+1)%nBooklets
	}
}

// fromRows builds Responses from rows of "1", "0" and "." (Missing), items named by ids.
func fromRows(ids []string, rows ...string) *Responses {
	r := &Responses{Items: ids}
	for p, s := range rows {
		row := make([]int8, len(s))
		for i, c := range s {
			switch c {
			case '1':
				row[i] = 1
			case '0':
				row[i] = 0
			default:
				row[i] = Missing
			}
		}
		r.Persons = append(r.Persons, fmt.Sprintf("P%d", p+1))
		r.Cells = append(r.Cells, row)
	}
	return r
}

func readResponsesFile(t testing.TB, name string) *Responses {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "calibrate", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ReadResponses(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
