package grpcguard

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// received is what gRPC hands the codec: b in a buffer of its pool, with gRPC's own reference,
// which it frees once Unmarshal returns.
func received(b []byte) mem.BufferSlice {
	return mem.BufferSlice{mem.Copy(b, mem.DefaultBufferPool())}
}

// TestCodecKeepsWireBytes: a wireMessage takes gRPC's buffers as they are (no copy, no decode)
// and keeps them past gRPC's own free; a second message (a unary call's, which gRPC refuses)
// gives the first back; any other message is decoded by gRPC's own codec.
func TestCodecKeepsWireBytes(t *testing.T) {
	t.Parallel()
	c := newCodec()
	want := []byte{0x0a, 0x03, 'a', 'b', 'c'}
	data := received(want)
	var w wireMessage
	if err := c.Unmarshal(data, &w); err != nil {
		t.Fatalf("Unmarshal: got %v; want nil", err)
	}
	data.Free() // what gRPC does once Unmarshal returns
	if !w.read || w.size() != 5 || !bytes.Equal(w.data.Materialize(), want) {
		t.Fatalf("kept: read %v, %d bytes % x; want read, 5 bytes % x", w.read, w.size(), w.data.Materialize(), want)
	}
	if &w.data[0].ReadOnlyData()[0] != &data[0].ReadOnlyData()[0] {
		t.Error("the bytes were copied; want gRPC's buffer itself")
	}
	second := received([]byte{0x0a, 0x01, 'x'})
	if err := c.Unmarshal(second, &w); err != nil || w.size() != 3 {
		t.Fatalf("second message: got %v, %d bytes; want nil, 3 bytes", err, w.size())
	}
	second.Free()
	w.free()
	if w.data != nil || w.size() != 0 || !w.read {
		t.Errorf("freed: got %d bytes, read %v; want none, still read", w.size(), w.read)
	}
	w.free() // twice: no harm

	var m scoringv1.ItemResult
	if err := c.Unmarshal(received([]byte{0x0a, 0x03, 'a', 'b', 'c'}), &m); err != nil || m.GetId() != "abc" {
		t.Errorf("another message: got %v, %v; want id abc", &m, err)
	}
}

// TestReceiveStreamed: a streamed message at its method's limit is decoded, one byte over is
// refused before it is decoded; a malformed one is InvalidArgument; an unknown field is refused,
// with its path, in a batch stream's record only; a message the guard did not read is Internal.
func TestReceiveStreamed(t *testing.T) {
	t.Parallel()
	rec, err := proto.Marshal(&scoringv1.ScoreBatchRecord{Id: "r1", Request: &scoringv1.ScoreBatchRecord_ScoreItemResults{
		ScoreItemResults: &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: proto.String("L1"), Result: proto.Int32(1)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(rec))
	// Field 9 in the record's first item: items is field 1 of the request, field 2 of the record.
	item := protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 3)
	req := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), item)
	withUnknown := protowire.AppendBytes(protowire.AppendTag(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "r1"), 2, protowire.BytesType), req)
	for _, tc := range []struct {
		name    string
		b       []byte
		limit   int64
		records bool
		unread  bool
		code    codes.Code
		says    string // in the refusal's details
	}{
		{"at the limit", rec, size, true, false, codes.OK, ""},
		{"one byte over", rec, size - 1, true, false, codes.ResourceExhausted, ""},
		{"malformed", []byte{0x0a, 0x05, 0x01}, size, true, false, codes.InvalidArgument, "the message is not valid protobuf: "},
		{"an unknown field in a record", withUnknown, size, true, false, codes.InvalidArgument, "scoreItemResults.items[0]: unknown field number 9"},
		{"an unknown field elsewhere", withUnknown, size, false, false, codes.OK, ""},
		{"not read by the guard", rec, size, true, true, codes.Internal, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var w wireMessage
			if !tc.unread {
				if err := newCodec().Unmarshal(received(tc.b), &w); err != nil {
					t.Fatal(err)
				}
			}
			m := &scoringv1.ScoreBatchRecord{Id: "left from the stream's last message", Request: &scoringv1.ScoreBatchRecord_ScoreItemResults{
				ScoreItemResults: &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: proto.String("old")}}}}}
			err := receiveStreamed(&routes.Route{MessageLimit: tc.limit, Records: tc.records}, &w, m)
			if got := status.Code(err); got != tc.code {
				t.Fatalf("got %v; want %v", err, tc.code)
			}
			if w.data != nil {
				t.Error("the bytes were not given back")
			}
			if tc.says != "" && !strings.Contains(problemsOf(err), tc.says) {
				t.Errorf("details: got %q; want them to say %q", problemsOf(err), tc.says)
			}
			switch {
			case tc.code == codes.OK && (m.GetId() != "r1" || len(m.GetScoreItemResults().GetItems()) != 1):
				t.Errorf("decoded: got %v; want the record alone", m)
			case tc.code != codes.OK && tc.code != codes.ResourceExhausted && tc.code != codes.Internal && proto.Size(m) != 0:
				t.Errorf("refused: got %v; want the message left empty", m)
			}
		})
	}
}

// problemsOf is an InvalidArgument's problems as "field: description" lines, sorted.
func problemsOf(err error) string {
	var lines []string
	for field, descs := range rpcerr.ToHTTP(err).Body.ValidationErrors {
		for _, d := range descs {
			lines = append(lines, field+": "+d)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestWellFormed: the messages the generated decoder takes, and each kind it leaves to
// protobuf-go, on the growth request (its percentiles packed, as protobuf-go writes them, and one
// by one, as another encoder may) and a batch record; the guard's answer is protobuf-go's in every
// case.
func TestWellFormed(t *testing.T) {
	t.Parallel()
	tag := protowire.AppendTag
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(tag(nil, num, protowire.VarintType), v)
	}
	bytesOf := func(num protowire.Number, v []byte) []byte {
		return protowire.AppendBytes(tag(nil, num, protowire.BytesType), v)
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	packedPercentiles := bytesOf(6, cat(protowire.AppendVarint(nil, 10), protowire.AppendVarint(nil, 50), protowire.AppendVarint(nil, 90)))
	unpacked := cat(varint(6, 10), varint(6, 50), varint(6, 90))
	framework := bytesOf(1, []byte("lexile"))
	prior := bytesOf(5, cat(varint(1, 3), bytesOf(2, []byte("BOY"))))
	deep := bytesOf(5, nil)
	growth := (&forecastv1.GrowthRequest{}).ProtoReflect().Descriptor()
	record := (&scoringv1.ScoreBatchRecord{}).ProtoReflect().Descriptor()
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"empty", nil, true},
		{"percentiles packed", cat(framework, packedPercentiles), true},
		{"percentiles one by one", cat(framework, unpacked), true},
		{"percentiles packed, then one more", cat(packedPercentiles, varint(6, 95)), true},
		{"a list split by another field", cat(bytesOf(5, nil), framework, prior), true},
		{"a field twice", cat(framework, framework), true},
		{"a message field twice (merged)", cat(prior, prior), true},
		{"an empty message", deep, true},
		{"an unknown field", cat(framework, varint(99, 1)), false},
		{"an unknown field in a prior", bytesOf(5, varint(15, 1)), false},
		{"a string that is not UTF-8", bytesOf(1, []byte{0xff}), false},
		{"a string in a prior that is not UTF-8", bytesOf(5, bytesOf(2, []byte{'B', 0xc3})), false},
		{"a number as bytes", bytesOf(2, []byte{1}), false},
		{"a string as a number", varint(1, 7), false},
		{"a double as a varint", varint(4, 7), false},
		{"a packed list cut short", bytesOf(6, []byte{0x80}), false},
		{"a length past the end", []byte{0x0a, 0x7f, 'x'}, false},
		{"a tag cut short", []byte{0x80}, false},
		{"field number 0", []byte{0x00, 0x01}, false},
		{"a group", tag(nil, 7, protowire.StartGroupType), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := wellFormed(growth, tc.b); got != tc.want {
				t.Errorf("got %v; want %v", got, tc.want)
			}
			// Either way, the guard decodes it as protobuf-go did (or refuses it as it did).
			want := map[bool]string{true: "own", false: ""}[tc.want]
			if got := decodedBy(t, tc.b, (&forecastv1.GrowthRequest{}).ProtoReflect().Type(), tc.name); got != want {
				t.Errorf("decoded by: got %q; want %q", got, want)
			}
		})
	}
	t.Run("a record's request", func(t *testing.T) {
		t.Parallel()
		ok := cat(bytesOf(1, []byte("r1")), bytesOf(2, bytesOf(1, cat(bytesOf(1, []byte("L1")), varint(2, 1)))))
		bad := cat(bytesOf(1, []byte("r1")), bytesOf(2, bytesOf(1, varint(9, 1))))
		if !wellFormed(record, ok) || wellFormed(record, bad) {
			t.Errorf("got %v, %v; want the record well formed, the one with an unknown field in an item not", wellFormed(record, ok), wellFormed(record, bad))
		}
	})
}

// TestCodecMarshalsAsProtobufGo: the generated encoder writes what protobuf-go reads back as the
// same message, below gRPC's pooling threshold and above it (a buffer from its pool).
func TestCodecMarshalsAsProtobufGo(t *testing.T) {
	t.Parallel()
	small := &scoringv1.Measure{Ability: 512, AbilityDisplay: "512L", Uncertainty: 30, Framework: "lexile", ApiVersion: "1"}
	large := &forecastv1.GroupForecastResponse{Framework: "quantile", Forecasts: &forecastv1.GroupForecasts{}}
	for i := range 2000 {
		large.Forecasts.Students = append(large.Forecasts.Students, &forecastv1.StudentForecast{Ability: float64(i), AbilityDisplay: "600Q", Uncertainty: 40, Probabilities: []float64{0.2, 0.5}})
	}
	for _, m := range []proto.Message{small, large, &scoringv1.ScoreBatchAnswer{Id: "r1", Answer: &scoringv1.ScoreBatchAnswer_Measure{Measure: small}}} {
		data, err := newCodec().Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got := m.ProtoReflect().Type().New().Interface()
		if err := proto.Unmarshal(data.Materialize(), got); err != nil || !proto.Equal(got, m) || data.Len() != proto.Size(m) {
			t.Errorf("%s: got %d bytes, %v; want the message back in %d bytes", m.ProtoReflect().Descriptor().FullName(), data.Len(), err, proto.Size(m))
		}
		data.Free()
	}
}

// BenchmarkMarshalAnswer encodes a scoring answer and a 2,000-student group answer with the
// generated encoders (codec) against gRPC's own codec (protobuf-go).
//
//	go test -run '^$' -bench MarshalAnswer -count 6 ./pkg/serve/internal/grpcguard/
func BenchmarkMarshalAnswer(b *testing.B) {
	measure := &scoringv1.Measure{Ability: 512, AbilityDisplay: "512L", Uncertainty: 30, Framework: "lexile", ApiVersion: "1"}
	group := &forecastv1.GroupForecastResponse{Framework: "quantile", Forecasts: &forecastv1.GroupForecasts{}}
	for i := range 2000 {
		group.Forecasts.Students = append(group.Forecasts.Students, &forecastv1.StudentForecast{Ability: float64(i), AbilityDisplay: "600Q", Uncertainty: 40, Probabilities: []float64{0.2, 0.5}})
	}
	for _, m := range []struct {
		name string
		msg  proto.Message
	}{{"measure", measure}, {"group2000", group}} {
		for _, c := range []struct {
			name  string
			codec interface {
				Marshal(any) (mem.BufferSlice, error)
			}
		}{{"generated", newCodec()}, {"grpc-go", newCodec().CodecV2}} {
			b.Run(m.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					data, err := c.codec.Marshal(m.msg)
					if err != nil {
						b.Fatal(err)
					}
					data.Free()
				}
			})
		}
	}
}
