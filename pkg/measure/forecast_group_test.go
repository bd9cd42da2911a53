package measure

import (
	"math"
	"math/rand/v2"
	"testing"
)

// referenceGroup is Group as it was before it was built on GroupAccumulator, kept verbatim in
// spirit (same sums in the same order) so that the accumulator is checked against code it does
// not share.
func referenceGroup(f *Framework, students []Student, testUncertainty float64, cuts []float64) GroupForecast {
	nb := len(cuts) + 1
	out := GroupForecast{Students: make([]Forecast, len(students)), Proportions: make([]float64, nb), StdErrs: make([]float64, nb)}
	if len(students) == 0 {
		return out
	}
	var sumMu, sumVar float64
	for i, s := range students {
		one := f.Forecast(s.Prior, s.ElapsedDays, testUncertainty, cuts)
		out.Students[i] = one
		sumMu += one.Ability
		sumVar += one.Uncertainty * one.Uncertainty
		for k, v := range one.Probabilities {
			out.Proportions[k] += v
			out.StdErrs[k] += v * (1 - v)
		}
	}
	n := float64(len(students))
	out.Ability = sumMu / n
	out.Uncertainty = math.Sqrt(sumVar) / n
	for k := range out.Proportions {
		out.Proportions[k] /= n
		out.StdErrs[k] = math.Sqrt(out.StdErrs[k]) / n
	}
	return out
}

func randomStudents(r *rand.Rand, n int) []Student {
	out := make([]Student, n)
	for i := range out {
		out[i] = Student{
			Prior:       Normal{Mean: -400 + 2200*r.Float64(), SD: 1 + 300*r.Float64()},
			ElapsedDays: float64(r.IntN(730)) + r.Float64(),
		}
	}
	return out
}

// sameBits reports whether a and b are the same float64s, bit for bit.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func checkAggregates(t *testing.T, what string, got, want GroupForecast) {
	t.Helper()
	if math.Float64bits(got.Ability) != math.Float64bits(want.Ability) ||
		math.Float64bits(got.Uncertainty) != math.Float64bits(want.Uncertainty) ||
		!sameBits(got.Proportions, want.Proportions) || !sameBits(got.StdErrs, want.StdErrs) {
		t.Errorf("%s: aggregates N(%v, %v) %v ± %v; want N(%v, %v) %v ± %v", what,
			got.Ability, got.Uncertainty, got.Proportions, got.StdErrs,
			want.Ability, want.Uncertainty, want.Proportions, want.StdErrs)
	}
}

func TestGroupAccumulatorEqualsGroup(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"lexile", "quantile"} {
		f := testFramework(t, name)
		r := rand.New(rand.NewPCG(uint64(len(name)), 7))
		for trial := range 40 {
			n := r.IntN(300)
			if trial < 3 {
				n = trial // 0, 1 and 2 students
			}
			students := randomStudents(r, n)
			cuts := []float64{}
			for c := -300.0; len(cuts) < 1+r.IntN(6); c += 50 + 400*r.Float64() {
				cuts = append(cuts, c)
			}
			testSD := 60 * r.Float64()
			want := referenceGroup(f, students, testSD, cuts)
			group := f.Group(students, testSD, cuts)
			checkAggregates(t, "Group", group, want)

			// Fed one at a time, with Result read at random split points: each partial result is
			// the reference of that prefix, and reading it changes nothing that follows.
			a := f.NewGroupAccumulator(testSD, cuts)
			for i, s := range students {
				if r.IntN(10) == 0 {
					checkAggregates(t, "prefix", a.Result(), referenceGroup(f, students[:i], testSD, cuts))
				}
				entry := a.Add(s)
				w := want.Students[i]
				if math.Float64bits(entry.Ability) != math.Float64bits(w.Ability) ||
					math.Float64bits(entry.Uncertainty) != math.Float64bits(w.Uncertainty) ||
					!sameBits(entry.Probabilities, w.Probabilities) || !sameBits(group.Students[i].Probabilities, w.Probabilities) {
					t.Fatalf("%s n=%d student %d: entry %+v; want %+v", name, n, i, entry, w)
				}
			}
			if a.Len() != n {
				t.Errorf("Len = %d; want %d", a.Len(), n)
			}
			got := a.Result()
			checkAggregates(t, "accumulator", got, want)
			if got.Students != nil {
				t.Errorf("Result keeps %d students; the accumulator must keep none", len(got.Students))
			}
		}
	}
}

func TestGroupAccumulatorEdges(t *testing.T) {
	t.Parallel()
	f := testFramework(t, "lexile")
	cuts := []float64{400, 800}

	empty := f.NewGroupAccumulator(35, cuts).Result()
	if empty.Ability != 0 || empty.Uncertainty != 0 || !sameBits(empty.Proportions, []float64{0, 0, 0}) || !sameBits(empty.StdErrs, []float64{0, 0, 0}) {
		t.Errorf("no students: %+v; want zero aggregates over 3 bands", empty)
	}

	// One student: the group is that student (mean of one, √(σ²)/1 = σ, proportions = its
	// probabilities, standard errors √(p(1−p))).
	s := Student{Prior: Normal{600, 80}, ElapsedDays: 90}
	a := f.NewGroupAccumulator(35, cuts)
	one := a.Add(s)
	g := a.Result()
	if g.Ability != one.Ability || g.Uncertainty != one.Uncertainty || !sameBits(g.Proportions, one.Probabilities) {
		t.Errorf("one student: group %+v; want the student's %+v", g, one)
	}
	for k, p := range one.Probabilities {
		if g.StdErrs[k] != math.Sqrt(p*(1-p)) {
			t.Errorf("one student band %d: stderr %v; want %v", k, g.StdErrs[k], math.Sqrt(p*(1-p)))
		}
	}

	// The cuts are copied: a caller reusing its slice does not move the group's bands.
	mine := []float64{400, 800}
	b := f.NewGroupAccumulator(35, mine)
	mine[0] = 700
	if got := b.Add(s); !sameBits(got.Probabilities, one.Probabilities) {
		t.Errorf("after the caller changed its cuts: %v; want %v", got.Probabilities, one.Probabilities)
	}
	// Each entry has probabilities of its own.
	second := b.Add(s)
	second.Probabilities[0] = 42
	if g := b.Result(); g.Proportions[0] == 42/2.0 {
		t.Errorf("an entry's probabilities alias the group's sums")
	}

	// An unprepared, invalid framework: as Group, the prior comes back and the aggregates are zero.
	bad := &Framework{}
	ba := bad.NewGroupAccumulator(35, cuts)
	e := ba.Add(s)
	if e.Ability != 600 || e.Uncertainty != 80 || len(e.Probabilities) != 3 || ba.Len() != 1 {
		t.Errorf("invalid framework entry %+v, Len %d; want the prior, 3 zero bands, Len 1", e, ba.Len())
	}
	checkAggregates(t, "invalid framework", ba.Result(), bad.Group([]Student{s}, 35, cuts))
}

func TestGroupAccumulatorAllocations(t *testing.T) {
	f := testFramework(t, "lexile")
	a := f.NewGroupAccumulator(35, []float64{400, 800})
	s := Student{Prior: Normal{600, 80}, ElapsedDays: 90}
	// One allocation a student (its probabilities), none for the group: memory does not grow
	// with the number of students beyond what the caller keeps.
	if n := testing.AllocsPerRun(100, func() { entrySink = a.Add(s) }); n != 1 {
		t.Errorf("Add allocates %v times; want 1 (the entry's probabilities)", n)
	}
}

var entrySink Forecast
