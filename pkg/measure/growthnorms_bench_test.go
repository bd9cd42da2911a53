package measure

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchCohort is the speed case: 6,000 students with two priors (15 design columns),
// measures to 0.1 unit, seeded.
func benchCohort() (priors [][]float64, current []float64) {
	rng := rand.New(rand.NewPCG(15, 6000))
	const n = 6000
	priors = [][]float64{make([]float64, n), make([]float64, n)}
	current = make([]float64, n)
	r1 := func(v float64) float64 { return math.Round(v*10) / 10 }
	for i := 0; i < n; i++ {
		a := rng.NormFloat64()
		p1 := r1(700 + 140*a + 40*rng.NormFloat64())
		p2 := r1(p1 + 100 + 45*rng.NormFloat64())
		priors[0][i], priors[1][i] = p1, p2
		current[i] = r1(0.35*p1 + 0.65*p2 + 110 + (45+0.1*math.Abs(p2-800))*rng.NormFloat64())
	}
	return priors, current
}

// BenchmarkGrowthFit fits the 100 τ of a two-prior model on 6,000 students. With Rscript and
// quantreg installed it also times R's rq(method = "br") on the same data in the same run
// (testdata/growth/bench.R: the design built in R, only the 100 fits timed) and reports R's
// seconds and the ratio R/Go, of wall-clock time and of CPU time (user + system, this process's
// for Go), the latter steadier on a shared machine:
// go test -run '^$' -bench GrowthFit -benchtime 3x -cpu 1 ./pkg/measure/
func BenchmarkGrowthFit(b *testing.B) {
	priors, current := benchCohort()
	var rWall, rCPU float64
	if _, err := exec.LookPath("Rscript"); err == nil {
		rWall, rCPU = timeR(b, priors, current)
	}
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for b.Loop() {
		if _, err := FitGrowth(priors, current, nil); err != nil {
			b.Fatal(err)
		}
	}
	goCPU := (cpuSeconds() - cpu0) / float64(b.N)
	b.ReportMetric(goCPU, "cpu-s/op")
	if rWall > 0 {
		b.ReportMetric(rWall, "R-s/op")
		b.ReportMetric(rWall/(b.Elapsed().Seconds()/float64(b.N)), "R/Go")
		b.ReportMetric(rCPU, "R-cpu-s/op")
		b.ReportMetric(rCPU/goCPU, "R/Go-cpu")
	}
}

// cpuSeconds is the process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// timeR writes the cohort for bench.R and returns R's fitting time, wall-clock and CPU, in
// seconds.
func timeR(b *testing.B, priors [][]float64, current []float64) (wall, cpu float64) {
	var buf bytes.Buffer
	buf.WriteString("prior1,prior2,current\n")
	for i := range current {
		fmt.Fprintf(&buf, "%g,%g,%g\n", priors[0][i], priors[1][i], current[i])
	}
	path := filepath.Join(b.TempDir(), "cohort.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "growth", "bench.R"))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "Rscript", script, path).Output()
	if err != nil {
		b.Fatalf("Rscript bench.R: %v", err)
	}
	if _, err := fmt.Sscan(string(out), &wall, &cpu); err != nil {
		b.Fatalf("bench.R printed %q; want two numbers of seconds", out)
	}
	return wall, cpu
}

// BenchmarkGrowthAnswer is the computation behind one POST /api/forecast/growth with two priors
// and five cuts (the model chosen, the 100 quantiles, the SGP, the cuts) against one single
// forecast, in the same run: go test -run '^$' -bench GrowthAnswer -benchmem ./pkg/measure/
func BenchmarkGrowthAnswer(b *testing.B) {
	d := Demo()
	cur := Window{6, "EOY"}
	priors := []Window{{4, "EOY"}, {5, "EOY"}}
	b.Run("growth percentile, two priors, five cuts", func(b *testing.B) {
		for b.Loop() {
			m, ok := d.GrowthModelFor("lexile", cur, priors)
			if !ok {
				b.Fatal("no model")
			}
			q := m.Quantiles([]float64{640, 760})
			if SGP(&q, 820) < 1 {
				b.Fatal("no SGP")
			}
			for _, p := range []int{10, 25, 50, 75, 90} {
				_ = math.Floor(Cut(&q, p) + 0.5)
			}
		}
	})
	f := testFramework(b, "lexile")
	b.Run("one forecast", func(b *testing.B) {
		for b.Loop() {
			atOrAbove(f, Normal{640, 60}, 365, 0, 900)
		}
	})
}
