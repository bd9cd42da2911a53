package measure

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkAdaptiveNext is §11's benchmark: the next item on a 100,000-item bank against the EAP
// of the same answers, which Next computes too; the target is next/eap ≤ 2.
// The bank spreads 100,000 lexile items evenly from -400 to 1800 over five strands; the session
// has answered 10 or 30 of them.
func BenchmarkAdaptiveNext(b *testing.B) {
	f := testFramework(b, "lexile")
	f.StrandNames = []string{"S1", "S2", "S3", "S4", "S5"}
	const n = 100_000
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{
			ID:         fmt.Sprintf("L%06d", i+1),
			Framework:  "lexile",
			Strand:     f.StrandNames[i%5],
			Difficulty: -400 + 2200*float64((i*7919)%n)/n,
		}
	}
	bk, err := NewBank(f, items)
	if err != nil {
		b.Fatal(err)
	}
	for _, answered := range []int{10, 30} {
		req := AdaptiveRequest{PriorAbility: ptr(700.0), PriorUncertainty: ptr(300.0), Stop: StopRules{MaxItems: ptr(100)}}
		// A session run to this length with the bank's own choices.
		for len(req.Items) < answered {
			step, err := bk.Next(&req)
			if err != nil || step.Next == nil {
				b.Fatalf("building the session: %v, %+v", err, step)
			}
			req.Items = append(req.Items, Response{ID: step.Next.ID, Correct: len(req.Items)%3 != 1})
		}
		var answers []Answer
		for _, r := range req.Items {
			it, _ := bk.lookup(r.ID)
			answers = append(answers, Answer{Item: it, Correct: r.Correct})
		}
		prior := Normal{Mean: 700, SD: 300}
		balanced := req
		balanced.Strands = map[string]float64{"S1": 1, "S2": 1, "S3": 2}
		randomesque := req
		randomesque.Randomesque, randomesque.Seed = ptr(5), ptr(int64(1))
		for _, c := range []struct {
			name string
			req  *AdaptiveRequest
		}{{"next", &req}, {"next-strands", &balanced}, {"next-randomesque5", &randomesque}} {
			// Each iteration times one Next and one EAP of the same answers, alternately, so
			// that the ratio holds even when other work on the machine slows both.
			b.Run(fmt.Sprintf("answered=%d/%s", answered, c.name), func(b *testing.B) {
				var inNext, inEAP time.Duration
				for b.Loop() {
					t0 := time.Now()
					step, err := bk.Next(c.req)
					t1 := time.Now()
					_, errEAP := f.Bayes(TestOf(answers), prior)
					t2 := time.Now()
					if err != nil || errEAP != nil || step.Next == nil {
						b.Fatalf("%v, %v, %+v", err, errEAP, step)
					}
					inNext += t1.Sub(t0)
					inEAP += t2.Sub(t1)
				}
				b.ReportMetric(float64(inNext.Nanoseconds())/float64(b.N), "next-ns/op")
				b.ReportMetric(float64(inEAP.Nanoseconds())/float64(b.N), "eap-ns/op")
				b.ReportMetric(float64(inNext)/float64(inEAP), "next/eap")
			})
		}
	}
}

// adaptivePCMBank is a lexile bank of 1,000 items over −400 … 1800: with poly, items scored 0–2
// and 0–3 in turn, steps 0.8 logits apart about the item's location (pcmBenchTest's items);
// without, the 0/1 items at the same locations.
func adaptivePCMBank(b testing.TB, poly bool) *Bank {
	b.Helper()
	f := testFramework(b, "lexile")
	const n = 1000
	items := make([]Item, n)
	for i := range items {
		loc := -400 + 2200*float64((i*613)%n)/n
		items[i] = Item{ID: fmt.Sprintf("L%04d", i+1), Framework: "lexile", Difficulty: loc}
		if poly {
			m := 2 + i%2
			for k := 0; k < m; k++ {
				items[i].Steps = append(items[i].Steps, loc+0.8*f.UnitsPerLogit*(float64(k)-float64(m-1)/2))
			}
		}
	}
	bk, err := NewBank(f, items)
	if err != nil {
		b.Fatal(err)
	}
	return bk
}

// BenchmarkAdaptiveNextPCM is the next item on a bank of 1,000 partial credit items against a
// bank of 1,000 dichotomous items at the same locations, after 10 answers chosen by each bank
// itself (about two thirds of the points), prior 700 ± 300. Each iteration times one Next and one
// EAP of the same answers (which Next computes first) in the thread's CPU time, steadier than
// wall time on a busy machine: next-cpu-ns/op is Next's cost, and select-cpu-ns/op the part of it
// that is not the EAP — the selection, whose ratio between the two banks the target (at most 1.5)
// is read on.
func BenchmarkAdaptiveNextPCM(b *testing.B) {
	for _, c := range []struct {
		name string
		poly bool
	}{{"items=pcm", true}, {"items=dichotomous", false}} {
		bk := adaptivePCMBank(b, c.poly)
		req := AdaptiveRequest{PriorAbility: ptr(700.0), PriorUncertainty: ptr(300.0), Stop: StopRules{MaxItems: ptr(100)}}
		var answers []Answer
		for len(req.Items) < 10 {
			step, err := bk.Next(&req)
			if err != nil || step.Next == nil {
				b.Fatalf("building the session: %v, %+v", err, step)
			}
			m := step.Next.MaxScore()
			r := Response{ID: step.Next.ID, Score: (2*m + len(req.Items)%3) / 3}
			req.Items = append(req.Items, r)
			answers = append(answers, Answer{Item: *step.Next, Score: r.Score})
		}
		test, prior := TestOf(answers), Normal{Mean: 700, SD: 300}
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			var inNext, inEAP time.Duration
			for b.Loop() {
				t0 := threadCPU()
				step, err := bk.Next(&req)
				t1 := threadCPU()
				_, errEAP := bk.Framework().Bayes(test, prior)
				t2 := threadCPU()
				if err != nil || errEAP != nil || step.Next == nil {
					b.Fatalf("%v, %v, %+v", err, errEAP, step)
				}
				inNext += t1 - t0
				inEAP += t2 - t1
			}
			n := float64(b.N)
			b.ReportMetric(float64(inNext.Nanoseconds())/n, "next-cpu-ns/op")
			b.ReportMetric(float64(inEAP.Nanoseconds())/n, "eap-cpu-ns/op")
			b.ReportMetric(float64((inNext-inEAP).Nanoseconds())/n, "select-cpu-ns/op")
		})
	}
}

// BenchmarkNewBankPCM is the cost of indexing the benchmark's bank of 1,000 items (NewBank):
// with items=pcm most of it is the partial credit items' information envelope, against
// items=dichotomous, the same locations as 0/1 items, in the same run.
func BenchmarkNewBankPCM(b *testing.B) {
	for _, c := range []struct {
		name string
		poly bool
	}{{"items=pcm", true}, {"items=dichotomous", false}} {
		bk := adaptivePCMBank(b, c.poly)
		items := bk.all
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var cpu time.Duration
			for b.Loop() {
				t0 := threadCPU()
				if _, err := NewBank(bk.fw, items); err != nil {
					b.Fatal(err)
				}
				cpu += threadCPU() - t0
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(items)), "cpu-ns/item")
		})
	}
}
