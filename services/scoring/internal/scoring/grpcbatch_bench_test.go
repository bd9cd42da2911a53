package scoring

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// BenchmarkGRPCBatchDifficulties40 is one record of a ScoreBatch stream (40 item difficulties,
// Bayes, as bench-batch sends), client and server in this process over loopback: b.N records
// on one stream, answers read as they come.
func BenchmarkGRPCBatchDifficulties40(b *testing.B) {
	s := benchServer(b)
	client := scoringv1.NewScoringServiceClient(s.Conn)
	req := &scoringv1.ScoreDifficultiesBayesRequest{Framework: proto.String("lexile"), NumberCorrect: proto.Int32(22),
		PriorAbility: proto.Float64(700), PriorUncertainty: proto.Float64(70), ElapsedDays: proto.Float64(120)}
	for i := range 40 {
		req.Items = append(req.Items, &scoringv1.ItemDifficulty{Difficulty: proto.Float64(500 + 10*float64(i))})
	}
	b.ReportAllocs()
	b.ResetTimer()
	st, err := client.ScoreBatch(s.Authed(context.Background()))
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		rec := &scoringv1.ScoreBatchRecord{Request: &scoringv1.ScoreBatchRecord_ScoreDifficultiesBayes{ScoreDifficultiesBayes: req}}
		for i := range b.N {
			rec.Id = strconv.Itoa(i)
			if st.Send(rec) != nil {
				return
			}
		}
		_ = st.CloseSend()
	}()
	var a scoringv1.ScoreBatchAnswer
	for n := 0; ; n++ {
		err := st.RecvMsg(&a)
		if errors.Is(err, io.EOF) {
			if n != b.N {
				b.Fatalf("%d answers for %d records", n, b.N)
			}
			return
		}
		if err != nil || a.GetMeasure() == nil {
			b.Fatalf("answer %d: %v %v", n, &a, err)
		}
	}
}
