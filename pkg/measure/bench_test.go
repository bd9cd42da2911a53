package measure

import (
	"fmt"
	"testing"
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
