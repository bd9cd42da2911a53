package measure

import (
	"fmt"
	"syscall"
	"runtime"
	"testing"
	"time"
)

// benchTest is n unit items over ±2 logits with two thirds right.
func benchTest(f *Framework, n int) Test {
	return Test{Items: spread(n, 700, 2*f.UnitsPerLogit), Correct: 2 * n / 3}
}

func BenchmarkStandard(b *testing.B) {
	f := testFramework(b, "lexile")
	for _, n := range []int{10, 40, 100, 1000} {
		tt := benchTest(f, n)
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Standard(tt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkBayes(b *testing.B) {
	f := testFramework(b, "lexile")
	prior := Normal{Mean: 650, SD: 150}
	for _, n := range []int{10, 40, 100, 1000} {
		tt := benchTest(f, n)
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Bayes(tt, prior); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBayesFar is the hard case: nobody right on items far below the prior (3000 ± 300
// against items around 700), a posterior far from normal that takes the trapezoid fallback.
func BenchmarkBayesFar(b *testing.B) {
	f := testFramework(b, "lexile")
	prior := Normal{Mean: 3000, SD: 300}
	for _, n := range []int{40, 1000, 5000} {
		tt := Test{Items: spread(n, 700, 2*f.UnitsPerLogit), Correct: 0}
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Bayes(tt, prior); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGroup(b *testing.B) {
	f := testFramework(b, "lexile")
	cuts := []float64{400, 600, 800, 1000}
	for _, n := range []int{10, 1000, 100000} {
		students := make([]Student, n)
		for i := range students {
			students[i] = Student{
				Prior:       Normal{Mean: -200 + float64(i%1700), SD: 40 + float64(i%90)},
				ElapsedDays: float64(i % 400),
			}
		}
		b.Run(fmt.Sprintf("students=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.Group(students, 35, cuts)
			}
		})
	}
}

// pcmBenchTest is n items over ±2 logits with steps of a partial credit item each (steps = 1: the
// dichotomous items of benchTest), about two thirds of the points scored.
func pcmBenchTest(f *Framework, n, steps int) Test {
	if steps == 1 {
		return benchTest(f, n)
	}
	items := spread(n, 700, 2*f.UnitsPerLogit)
	for i := range items {
		c := items[i].Measure
		for k := 0; k < steps; k++ {
			items[i].Steps = append(items[i].Steps, c+0.8*f.UnitsPerLogit*(float64(k)-float64(steps-1)/2))
		}
	}
	return Test{Items: items, Correct: 2 * n * steps / 3}
}

// BenchmarkPCM is the cost of partial credit: 40 items scored 0–1 (the dichotomous path), 0–2
// and 0–3, on both estimators (docs/performance.md reports the ratios).
func BenchmarkPCM(b *testing.B) {
	f := testFramework(b, "lexile")
	prior := Normal{Mean: 650, SD: 150}
	for _, steps := range []int{1, 2, 3} {
		tt := pcmBenchTest(f, 40, steps)
		b.Run(fmt.Sprintf("standard/items=40/steps=%d", steps), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Standard(tt); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("bayes/items=40/steps=%d", steps), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Bayes(tt, prior); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBayesManySteps is the costliest request the difficulties path accepts: one item of
// 5,000 steps (the first at −10,000, the rest at 10,000), one point, prior 0 ± 10,000. Its
// posterior takes the fallback, held to denseWork (about 400 evaluations of 5,001 categories).
func BenchmarkBayesManySteps(b *testing.B) {
	f := testFramework(b, "lexile")
	tt := Test{Items: manySteps(5000, -10000, 10000), Correct: 1}
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		if _, err := f.Bayes(tt, Normal{Mean: 0, SD: 10000}); err != nil {
			b.Fatal(err)
		}
	}
	// The process's CPU time, not the wall clock, on a machine shared with other work (run with
	// -cpu 1: the estimate is single-threaded, the rest is the runtime's).
	b.ReportMetric(float64(processCPU()-start)/float64(b.N)/1e6, "cpu-ms/op")
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPCMPerItem is the ratio BenchmarkPCM is read for: 40 items scored 0–2 or 0–3 against 40
// scored 0/1 on the same estimator, per item (the tests are the same length), the target being at
// most 1.5. Each iteration times a batch of 50 calls of each, in turn, in the thread's CPU time,
// so that the ratio holds on a machine busy with other work.
func BenchmarkPCMPerItem(b *testing.B) {
	f := testFramework(b, "lexile")
	prior := Normal{Mean: 650, SD: 150}
	dich := pcmBenchTest(f, 40, 1)
	for _, est := range []string{"standard", "bayes"} {
		call := func(tt Test) error {
			var err error
			if est == "standard" {
				_, err = f.Standard(tt)
			} else {
				_, err = f.Bayes(tt, prior)
			}
			return err
		}
		for _, steps := range []int{2, 3} {
			tt := pcmBenchTest(f, 40, steps)
			b.Run(fmt.Sprintf("%s/items=40/steps=%d", est, steps), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				const batch = 50
				var inPCM, inDich time.Duration
				for b.Loop() {
					t0 := threadCPU()
					for range batch {
						if err := call(dich); err != nil {
							b.Fatal(err)
						}
					}
					t1 := threadCPU()
					for range batch {
						if err := call(tt); err != nil {
							b.Fatal(err)
						}
					}
					t2 := threadCPU()
					inDich += t1 - t0
					inPCM += t2 - t1
				}
				n := float64(b.N) * batch
				b.ReportMetric(float64(inDich.Nanoseconds())/n, "dich-cpu-ns/op")
				b.ReportMetric(float64(inPCM.Nanoseconds())/n, "pcm-cpu-ns/op")
				b.ReportMetric(float64(inPCM)/float64(inDich), "pcm/dich")
			})
		}
	}
}
