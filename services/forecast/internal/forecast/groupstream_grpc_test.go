package forecast

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// TestGRPCGroupStreamEqualsUnary: ForecastGroupStream answers each valid student with its entry
// of the unary gRPC group answer for the valid students, each invalid one with the status that
// unary group gives it alone, in its place with its message number, and ends with the unary
// group's aggregate.
func TestGRPCGroupStreamEqualsUnary(t *testing.T) {
	t.Parallel()
	s := start(t)
	client := forecastv1.NewForecastServiceClient(s.Conn)
	ctx := s.Authed(context.Background())
	for _, tc := range []struct {
		name     string
		settings *forecastv1.GroupStreamSettings
		n        int
	}{
		{"reading", &forecastv1.GroupStreamSettings{Subject: "reading", TestUncertainty: proto.Float64(32.5), CutLevels: []float64{500, 650, 800}}, 3000},
		{"math with percentile", &forecastv1.GroupStreamSettings{Subject: "math", TestUncertainty: proto.Float64(20), CutLevels: []float64{300, 700}, Grade: proto.Int32(4), TimeOfYear: proto.String("EOY")}, 300},
		{"one student", &forecastv1.GroupStreamSettings{Subject: "math", TestUncertainty: proto.Float64(0), CutLevels: []float64{400, 500, 600, 700}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(tc.n), 9))
			msgs := []*forecastv1.ForecastGroupStreamRequest{{Message: &forecastv1.ForecastGroupStreamRequest_Settings{Settings: tc.settings}}}
			var valid, invalid []*forecastv1.StudentData
			var invalidAt []int64
			for i := range tc.n {
				d := &forecastv1.StudentData{PriorAbility: proto.Float64(100 + r.Float64()*1200), PriorUncertainty: proto.Float64(5 + r.Float64()*150), ElapsedDays: proto.Float64(float64(r.IntN(400)))}
				if i > 0 && r.IntN(5) == 0 {
					d.PriorUncertainty = proto.Float64(-1)
					invalid, invalidAt = append(invalid, d), append(invalidAt, int64(len(msgs)+1))
				} else {
					valid = append(valid, d)
				}
				msgs = append(msgs, &forecastv1.ForecastGroupStreamRequest{Message: &forecastv1.ForecastGroupStreamRequest_Student{Student: d}})
			}
			group := func(students []*forecastv1.StudentData) (*forecastv1.GroupForecastResponse, error) {
				req := &forecastv1.GroupForecastRequest{StudentData: students, TestUncertainty: tc.settings.TestUncertainty, CutLevels: tc.settings.CutLevels, Grade: tc.settings.Grade, TimeOfYear: tc.settings.TimeOfYear}
				if tc.settings.Subject == "math" {
					return client.ForecastMathGroup(ctx, req)
				}
				return client.ForecastReadingGroup(ctx, req)
			}
			unary, err := group(valid)
			if err != nil {
				t.Fatal(err)
			}
			answers, err := callGroupStream(ctx, client, msgs)
			if err != nil {
				t.Fatal(err)
			}
			if len(answers) != tc.n+1 {
				t.Fatalf("%d answers for %d students", len(answers), tc.n)
			}
			v, inv := 0, 0
			for i, a := range answers[:tc.n] {
				if bad := a.GetInvalid(); bad != nil {
					if inv >= len(invalid) || bad.GetMessage() != invalidAt[inv] {
						t.Fatalf("answer %d: invalid student at message %d; want %v", i, bad.GetMessage(), invalidAt)
					}
					if inv < 3 {
						_, want := group([]*forecastv1.StudentData{invalid[inv]})
						got := servetest.RecordError(bad.GetStatus())
						if !servetest.SameStatus(got, want) {
							t.Errorf("invalid student %d: %v; want %v", inv, got, want)
						}
					}
					inv++
					continue
				}
				if v >= len(unary.GetForecasts().GetStudents()) || !proto.Equal(a.GetStudent(), unary.GetForecasts().GetStudents()[v]) {
					t.Fatalf("student %d: %v; want its unary entry", v, a)
				}
				v++
			}
			if v != len(valid) || inv != len(invalid) {
				t.Errorf("%d entries and %d invalid; want %d and %d", v, inv, len(valid), len(invalid))
			}
			last := answers[tc.n].GetGroup()
			if last.GetStudents() != int64(len(valid)) || !proto.Equal(last.GetAggregate(), unary.GetForecasts().GetGroup()) {
				t.Errorf("group %v; want %d students and %v", last, len(valid), unary.GetForecasts().GetGroup())
			}
		})
	}
}

// TestGRPCGroupStreamRefusals: the settings decide the whole call; a later settings message is
// one invalid answer; no valid student gives a group without aggregate.
func TestGRPCGroupStreamRefusals(t *testing.T) {
	t.Parallel()
	s := start(t)
	client := forecastv1.NewForecastServiceClient(s.Conn)
	ctx := s.Authed(context.Background())
	settings := func(subject string, sd float64, cuts ...float64) *forecastv1.ForecastGroupStreamRequest {
		return &forecastv1.ForecastGroupStreamRequest{Message: &forecastv1.ForecastGroupStreamRequest_Settings{Settings: &forecastv1.GroupStreamSettings{Subject: subject, TestUncertainty: proto.Float64(sd), CutLevels: cuts}}}
	}
	student := &forecastv1.ForecastGroupStreamRequest{Message: &forecastv1.ForecastGroupStreamRequest_Student{Student: &forecastv1.StudentData{PriorAbility: proto.Float64(600), PriorUncertainty: proto.Float64(50), ElapsedDays: proto.Float64(10)}}}
	for _, tc := range []struct {
		name   string
		msgs   []*forecastv1.ForecastGroupStreamRequest
		code   codes.Code
		fields []string
	}{
		{"empty", nil, codes.InvalidArgument, []string{"settings"}},
		{"student first", []*forecastv1.ForecastGroupStreamRequest{student}, codes.InvalidArgument, []string{"settings"}},
		{"bad subject and cuts", []*forecastv1.ForecastGroupStreamRequest{settings("science", 1, 800, 500), student}, codes.InvalidArgument, []string{"subject", "cutLevels[1]"}},
		{"test uncertainty 10001", []*forecastv1.ForecastGroupStreamRequest{settings("reading", 10001, 500)}, codes.InvalidArgument, []string{"testUncertainty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers, err := callGroupStream(ctx, client, tc.msgs)
			if status.Code(err) != tc.code || len(answers) != 0 {
				t.Fatalf("got %v after %d answers; want %v before any", err, len(answers), tc.code)
			}
			for _, f := range tc.fields {
				if !servetest.HasViolation(err, f) {
					t.Errorf("%v: no problem of %s", err, f)
				}
			}
		})
	}
	// The last accepted test uncertainty, a second settings message, no valid student.
	answers, err := callGroupStream(ctx, client, []*forecastv1.ForecastGroupStreamRequest{settings("math", 10000, 500), settings("math", 1, 500)})
	if err != nil || len(answers) != 2 {
		t.Fatalf("got %d answers, %v; want 2", len(answers), err)
	}
	if bad := answers[0].GetInvalid(); bad.GetMessage() != 2 || codes.Code(bad.GetStatus().GetCode()) != codes.InvalidArgument {
		t.Errorf("second settings: %v; want message 2 INVALID_ARGUMENT", answers[0])
	}
	if g := answers[1].GetGroup(); g == nil || g.GetStudents() != 0 || g.GetAggregate() != nil {
		t.Errorf("last answer %v; want a group of 0 students without aggregate", answers[1])
	}
}

// callGroupStream sends msgs, reading as it sends, and returns the answers and the call's status.
func callGroupStream(ctx context.Context, client forecastv1.ForecastServiceClient, msgs []*forecastv1.ForecastGroupStreamRequest) ([]*forecastv1.ForecastGroupStreamResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := client.ForecastGroupStream(ctx)
	if err != nil {
		return nil, err
	}
	go func() {
		for _, m := range msgs {
			if st.Send(m) != nil {
				return
			}
		}
		_ = st.CloseSend()
	}()
	var out []*forecastv1.ForecastGroupStreamResponse
	for {
		a, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
}
