package grpcguard

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// recordCodec is a codec that reads the two batch rpcs' records by decodeRecord.
func recordCodec(t testing.TB) *codec {
	t.Helper()
	g := &Guard{codec: newCodec(jsonwire.New(jsonwire.Options{}))}
	for _, full := range []string{scoringv1.ScoringService_ScoreBatch_FullMethodName, forecastv1.ForecastService_ForecastBatch_FullMethodName} {
		sh, err := routes.ReadBatch(full)
		if err != nil {
			t.Fatal(err)
		}
		g.DecodeRecords(sh)
	}
	return g.codec
}

// randomRecord is the wire bytes of a ScoreBatchRecord or ForecastBatchRecord with a random
// request, then perhaps damaged: a field twice, a field unknown, a wrong wire type, an id that is
// not UTF-8, an unknown field inside the request, a byte changed, the end cut off.
func randomRecord(r *rand.Rand) (_ []byte, _ proto.Message, damaged bool) {
	var rec proto.Message
	id := "r" + strconv.Itoa(r.IntN(1000))
	switch r.IntN(4) {
	case 0:
		req := &scoringv1.ScoreDifficultiesBayesRequest{Framework: proto.String("lexile"), PriorAbility: proto.Float64(r.NormFloat64() * 300)}
		for range r.IntN(50) {
			req.Items = append(req.Items, &scoringv1.ItemDifficulty{Difficulty: proto.Float64(r.Float64() * 1000)})
		}
		if r.IntN(2) == 0 {
			req.NumberCorrect = proto.Int32(int32(r.IntN(60)))
		}
		rec = &scoringv1.ScoreBatchRecord{Id: id, Request: &scoringv1.ScoreBatchRecord_ScoreDifficultiesBayes{ScoreDifficultiesBayes: req}}
	case 1:
		req := &scoringv1.ScoreItemResultsRequest{}
		for i := range r.IntN(20) {
			req.Items = append(req.Items, &scoringv1.ItemResult{Id: proto.String("L00000" + strconv.Itoa(i)), Result: proto.Int32(int32(r.IntN(2)))})
		}
		rec = &scoringv1.ScoreBatchRecord{Id: id, Request: &scoringv1.ScoreBatchRecord_ScoreItemResults{ScoreItemResults: req}}
	case 2:
		req := &forecastv1.GroupForecastRequest{TestUncertainty: proto.Float64(30), CutLevels: []float64{500, 700}}
		for range r.IntN(30) {
			req.StudentData = append(req.StudentData, &forecastv1.StudentData{PriorAbility: proto.Float64(600), PriorUncertainty: proto.Float64(r.Float64() * 100), ElapsedDays: proto.Float64(90)})
		}
		rec = &forecastv1.ForecastBatchRecord{Id: id, Request: &forecastv1.ForecastBatchRecord_ForecastMathGroup{ForecastMathGroup: req}}
	default:
		rec = &forecastv1.ForecastBatchRecord{Id: id} // no request
	}
	b, err := proto.Marshal(rec)
	if err != nil {
		panic(err)
	}
	kind := r.IntN(12)
	switch kind {
	case 0: // the request again: protobuf-go merges the two
		b = append(b, b...)
	case 1: // a field the record does not have
		b = protowire.AppendVarint(protowire.AppendTag(b, 99, protowire.VarintType), 7)
	case 2: // the id with the wrong wire type
		b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), 7)
	case 3: // an id that is not UTF-8
		b = protowire.AppendBytes(protowire.AppendTag(b[:0:0], 1, protowire.BytesType), []byte{0xff, 'x'})
	case 4: // a request with a field its type does not have
		inner := protowire.AppendVarint(protowire.AppendTag(nil, 77, protowire.VarintType), 1)
		b = protowire.AppendBytes(protowire.AppendTag(b, 2, protowire.BytesType), inner)
	case 5:
		if len(b) > 0 {
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
		}
	case 6:
		b = b[:r.IntN(len(b)+1)]
	case 7: // the request field again, without the id: protobuf-go merges the two requests
		again := proto.Clone(rec)
		again.ProtoReflect().Clear(again.ProtoReflect().Descriptor().Fields().ByName("id"))
		more, err := proto.Marshal(again)
		if err != nil {
			panic(err)
		}
		b = append(b, more...)
	}
	return b, rec.ProtoReflect().Type().New().Interface(), kind <= 7
}

// TestRecordsDecodeAsProtobufGo: a record the envelope decoder takes is decoded exactly as
// proto.Unmarshal decodes it, with no unknown field left to find; one it declines is left to
// protobuf-go. On 20,000 random and damaged records; every undamaged one is taken.
func TestRecordsDecodeAsProtobufGo(t *testing.T) {
	t.Parallel()
	c := recordCodec(t)
	r := rand.New(rand.NewPCG(21, 21))
	taken, declined := 0, 0
	for i := range 20000 {
		b, m, damaged := randomRecord(r)
		checkRecordDecode(t, c, b, m, i)
		if c.decodeRecord(c.batchRecords[m.ProtoReflect().Descriptor().FullName()], b, m) {
			taken++
		} else {
			declined++
			if !damaged {
				t.Fatalf("record %d %x is sound, yet declined", i, b)
			}
		}
	}
	t.Logf("taken %d, declined %d", taken, declined)
	if declined < 20000/4 {
		t.Errorf("declined %d of 20,000: want the damaged ones (more than half) mostly declined", declined)
	}
}

func checkRecordDecode(t *testing.T, c *codec, b []byte, m proto.Message, i int) {
	t.Helper()
	e := c.batchRecords[m.ProtoReflect().Descriptor().FullName()]
	if !c.decodeRecord(e, b, m) {
		return
	}
	want := m.ProtoReflect().Type().New().Interface()
	if err := proto.Unmarshal(b, want); err != nil {
		t.Fatalf("record %d %x: taken, but protobuf-go refuses it: %v", i, b, err)
	}
	if !proto.Equal(m, want) || hasUnknown(want.ProtoReflect()) {
		t.Fatalf("record %d %x:\nenvelope    %v\nprotobuf-go %v (unknown fields: %v)", i, b, m, want, hasUnknown(want.ProtoReflect()))
	}
}

// hasUnknown reports whether m or a message in it holds unknown fields.
func hasUnknown(m protoreflect.Message) bool {
	found := len(m.GetUnknown()) > 0
	m.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case f.IsList() && f.Message() != nil:
			for i := range v.List().Len() {
				found = found || hasUnknown(v.List().Get(i).Message())
			}
		case f.Message() != nil && !f.IsMap():
			found = found || hasUnknown(v.Message())
		}
		return !found
	})
	return found
}

// FuzzDecodeRecord: whatever the bytes, a record the envelope decoder takes is what
// protobuf-go makes of it.
//
//	go test -run '^$' -fuzz FuzzDecodeRecord -fuzztime 60s ./pkg/serve/internal/grpcguard/
func FuzzDecodeRecord(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 5))
	for range 40 {
		b, m, _ := randomRecord(r)
		f.Add(b, m.ProtoReflect().Descriptor().FullName() == "yardstick.scoring.v1.ScoreBatchRecord")
	}
	c := recordCodec(f)
	f.Fuzz(func(t *testing.T, b []byte, scoring bool) {
		var m proto.Message = &forecastv1.ForecastBatchRecord{}
		if scoring {
			m = &scoringv1.ScoreBatchRecord{}
		}
		checkRecordDecode(t, c, bytes.Clone(b), m, 0)
	})
}

// TestRecordOnReusedMessage: a stream decodes each message into the same one; a record taken
// leaves nothing behind on it, however many messages the stream reads (each record once left a
// cleanup on the message for its whole life: 157 MiB over a 1,000,000-student group stream).
func TestRecordOnReusedMessage(t *testing.T) {
	c := newCodec(jsonwire.New(jsonwire.Options{}))
	m := &forecastv1.ForecastGroupStreamRequest{}
	cycle := func(n int) {
		for range n {
			c.record(m, received{general: true})
			if _, ok := c.take(m); !ok {
				t.Fatal("the record was not found")
			}
		}
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	cycle(1000)
	before := heap()
	cycle(200000)
	if grown := int64(heap()) - int64(before); grown > 1<<20 {
		t.Errorf("the heap grew %d KiB over 200,000 records on one message; want it flat", grown>>10)
	}
	if c.waiting.Load() != 0 {
		t.Errorf("%d records waiting; want none", c.waiting.Load())
	}
	runtime.KeepAlive(m)
}
