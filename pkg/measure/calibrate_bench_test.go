package measure

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// benchCSV is the speed case as a response file: 5,000 persons, 60 items in 6 blocks of
// 10, booklet b (person p takes booklet p mod 6) holding blocks b, b+1, b+2 (cyclically), so
// each booklet has 30 items and overlaps its neighbours by 20; no other blanks.
func benchCSV() []byte {
	rng := rand.New(rand.NewPCG(60, 5000))
	beta := make([]float64, 60)
	for i := range beta {
		beta[i] = -2.5 + 5*float64(i)/59
	}
	resp := simulate(rng, 5000, beta, 0, 1.2, func(p, i int) bool {
		b, block := p%6, i/10
		return block == b || block == (b+1)%6 || block == (b+2)%6
	})
	var buf bytes.Buffer
	buf.WriteString("person")
	for _, id := range resp.Items {
		buf.WriteString("," + id)
	}
	buf.WriteByte('\n')
	for p, row := range resp.Cells {
		buf.WriteString(resp.Persons[p])
		for _, x := range row {
			buf.WriteByte(',')
			if x != Missing {
				fmt.Fprint(&buf, x)
			}
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// BenchmarkCalibrate is CSV in → report out for the case above: read, calibrate (CML, SEs, fit),
// place on the quantile scale, encode the JSON report. Run it on one core:
// go test -run '^$' -bench Calibrate -cpu 1 ./pkg/measure/
func BenchmarkCalibrate(b *testing.B) {
	data := benchCSV()
	Demo()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		resp, err := ReadResponses(bytes.NewReader(data), "bench.csv")
		if err != nil {
			b.Fatal(err)
		}
		rep, _, err := CalibrateBank(context.Background(), BankJob{Responses: resp, Framework: "quantile", Base: Demo(), Mean: 700})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(rep); err != nil {
			b.Fatal(err)
		}
		if len(rep.Items) != 60 {
			b.Fatalf("%d items calibrated; want 60", len(rep.Items))
		}
	}
}

// BenchmarkCalibrateRandomBlanks is the costly shape: 2,000 persons × 40 items with 30% of the
// cells blank at random, so nearly every person is a booklet of their own and the symmetric
// functions are computed per person (≈ 1.2·k³ operations each per iteration).
func BenchmarkCalibrateRandomBlanks(b *testing.B) {
	rng := rand.New(rand.NewPCG(40, 2000))
	beta := make([]float64, 40)
	for i := range beta {
		beta[i] = -2 + 4*float64(i)/39
	}
	resp := simulate(rng, 2000, beta, 0, 1, func(p, i int) bool { return rng.Float64() >= 0.3 })
	for b.Loop() {
		cal, err := Calibrate(context.Background(), resp, CalibrateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(cal.Items) != 40 {
			b.Fatalf("%d items calibrated; want 40", len(cal.Items))
		}
	}
}

// pcmBenchData is the partial credit case: 2,000 persons × 30 items scored 0–3 (steps
// spread over ±2.5 logits), every cell answered when blank is 0, else that share of the cells
// blank at random (nearly every person a booklet of their own).
func pcmBenchData(blank float64) *Responses {
	rng := rand.New(rand.NewPCG(30, 2000))
	steps := make([][]float64, 30)
	for i := range steps {
		loc := -1.5 + 3*float64(i)/29
		steps[i] = []float64{loc - 1, loc, loc + 1}
	}
	return simulatePCM(rng, 2000, steps, 0, 1.2, func(p, i int) bool { return rng.Float64() >= blank })
}

// BenchmarkCalibratePCM: Calibrate (CML, step and location SEs, item fit) by the partial credit
// model on 2,000 persons × 30 items of 4 categories, complete, and with 20% of the cells blank at
// random; ratio calibrates the two in turn and reports each one's CPU time (of the thread: on a
// shared machine steadier than wall time) and blank20/complete. Run it on one core:
// go test -run '^$' -bench CalibratePCM -cpu 1 -benchtime 3x -benchmem ./pkg/measure/
func BenchmarkCalibratePCM(b *testing.B) {
	calibrate := func(b *testing.B, resp *Responses) {
		cal, err := Calibrate(context.Background(), resp, CalibrateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(cal.Items) != 30 || cal.Model != ModelPCM {
			b.Fatalf("%d items calibrated by %s; want 30 by pcm", len(cal.Items), cal.Model)
		}
	}
	complete, blank20 := pcmBenchData(0), pcmBenchData(0.2)
	for _, c := range []struct {
		name string
		resp *Responses
	}{{"complete", complete}, {"blank20", blank20}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				calibrate(b, c.resp)
			}
		})
	}
	b.Run("ratio", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var inComplete, inBlank time.Duration
		for b.Loop() {
			t0 := threadCPU()
			calibrate(b, complete)
			t1 := threadCPU()
			calibrate(b, blank20)
			t2 := threadCPU()
			inComplete += t1 - t0
			inBlank += t2 - t1
		}
		n := float64(b.N)
		b.ReportMetric(float64(inComplete.Microseconds())/1e3/n, "complete-cpu-ms/op")
		b.ReportMetric(float64(inBlank.Microseconds())/1e3/n, "blank20-cpu-ms/op")
		b.ReportMetric(float64(inBlank)/float64(inComplete), "blank20/complete")
	})
}
