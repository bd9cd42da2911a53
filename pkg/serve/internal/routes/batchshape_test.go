package routes

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/proto/yardstick"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestReadBatch: the contract's batch rpcs read as records naming every unary rpc of their service,
// and what is not a batch rpc is refused at start-up with the reason.
func TestReadBatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		full    string
		methods int
		answers int
	}{
		{scoringv1.ScoringService_ScoreBatch_FullMethodName, 11, 4},
		{forecastv1.ForecastService_ForecastBatch_FullMethodName, 7, 5},
	} {
		sh, err := ReadBatch(tc.full)
		if err != nil {
			t.Fatalf("%s: %v", tc.full, err)
		}
		if len(sh.Methods) != tc.methods || len(sh.Answers) != tc.answers || sh.ErrField == nil {
			t.Errorf("%s: %d rpcs, %d answer types; want %d and %d, and an error field", tc.full, len(sh.Methods), len(sh.Answers), tc.methods, tc.answers)
		}
		for _, full := range sh.Methods {
			name := full[strings.LastIndex(full, "/")+1:]
			if f := sh.Request.Fields().ByName(protoName(yardstick.RecordField(name))); f == nil || sh.Methods[f.Number()] != full {
				t.Errorf("%s: rpc %s is not named by field %s", tc.full, full, yardstick.RecordField(name))
			}
		}
	}
	for _, tc := range []struct{ full, want string }{
		{scoringv1.ScoringService_ScoreItemResults_FullMethodName, "not a bidirectional stream"},
		{forecastv1.ForecastService_ForecastGroupStream_FullMethodName, "must be {string id, oneof request}"},
		{"/yardstick.scoring.v1.Nope/ScoreBatch", "not found"},
		{"ScoreBatch", "not /service/method"},
	} {
		if _, err := ReadBatch(tc.full); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadBatch(%s): %v; want an error saying %q", tc.full, err, tc.want)
		}
	}
}

func protoName(s string) protoreflect.Name { return protoreflect.Name(s) }

// TestRecordable: the contract's option, on unary rpcs only.
func TestRecordable(t *testing.T) {
	t.Parallel()
	sd := scoringv1.File_yardstick_scoring_v1_scoring_proto.Services().Get(0)
	for name, want := range map[string]bool{"ScoreItemIds": true, "NextItem": true, "ScoreBatch": false} {
		if got := recordable(sd.Methods().ByName(protoName(name))); got != want {
			t.Errorf("%s: got %v; want %v", name, got, want)
		}
	}
}
