package jsonwire

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

func difficulties40() []byte {
	var items []string
	for i := 0; i < 40; i++ {
		items = append(items, `{"difficulty":`+strconv.Itoa(500+10*i)+`}`)
	}
	return []byte(`{"items":[` + strings.Join(items, ",") + `],"numberCorrect":22,"framework":"lexile","priorAbility":700,"priorUncertainty":70,"elapsedDays":120}`)
}

// BenchmarkUnmarshalDifficulties40 decodes make bench-e2e's request body into its message.
func BenchmarkUnmarshalDifficulties40(b *testing.B) {
	c := New(Options{})
	body := difficulties40()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var req scoringv1.ScoreDifficultiesBayesRequest
		if err := c.Unmarshal(body, &req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdlibDifficulties40 is the same body into plain structs with encoding/json: the
// reference's decoding.
func BenchmarkStdlibDifficulties40(b *testing.B) {
	body := difficulties40()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var req struct {
			Items []struct {
				Difficulty float64 `json:"difficulty"`
				Count      *int    `json:"count"`
			} `json:"items"`
			NumberCorrect    int     `json:"numberCorrect"`
			Framework        string  `json:"framework"`
			PriorAbility     float64 `json:"priorAbility"`
			PriorUncertainty float64 `json:"priorUncertainty"`
			ElapsedDays      float64 `json:"elapsedDays"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			b.Fatal(err)
		}
	}
}
