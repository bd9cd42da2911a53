package measure

import (
	"fmt"
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
