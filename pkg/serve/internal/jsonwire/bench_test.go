package jsonwire

import (
	"encoding/json"
	"strconv"
	"strings"
	"syscall"
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
	cpuPerOp(b, func() {
		for i := 0; i < b.N; i++ {
			var req scoringv1.ScoreDifficultiesBayesRequest
			if err := c.Unmarshal(body, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStdlibDifficulties40 is the same body into plain structs with encoding/json: the
// reference's decoding.
func BenchmarkStdlibDifficulties40(b *testing.B) {
	body := difficulties40()
	b.ReportAllocs()
	cpuPerOp(b, func() {
		for i := 0; i < b.N; i++ {
			stdlibDecode(b, body)
		}
	})
}

func stdlibDecode(b *testing.B, body []byte) {
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

// BenchmarkUnmarshalDifficulties40Reflect is the same body through the protoreflect path (what
// a message without a generated codec takes), on the same decoder: the generated code's gain.
func BenchmarkUnmarshalDifficulties40Reflect(b *testing.B) {
	c := New(Options{})
	body := difficulties40()
	b.ReportAllocs()
	cpuPerOp(b, func() {
		for i := 0; i < b.N; i++ {
			var req scoringv1.ScoreDifficultiesBayesRequest
			if err := c.unmarshalReflect(body, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUnmarshalDifficulties40Tokenizer is the same body through the generated codec on
// go-faster/jx alone, without the scanner's first pass: what the scanner pays.
func BenchmarkUnmarshalDifficulties40Tokenizer(b *testing.B) {
	c := New(Options{})
	body := difficulties40()
	b.ReportAllocs()
	cpuPerOp(b, func() {
		for i := 0; i < b.N; i++ {
			var req scoringv1.ScoreDifficultiesBayesRequest
			if err := c.unmarshalTokenizer(body, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// measureAnswer is make bench-e2e's answer to that request.
func measureAnswer() *scoringv1.Measure {
	return &scoringv1.Measure{Ability: 712, AbilityDisplay: "712L", Uncertainty: 41, Framework: "lexile", ApiVersion: "1.4.0", Percentile: new(int32(63))}
}

// BenchmarkMarshalMeasure encodes the answer: the generated encoder, the protoreflect path, and
// encoding/json of plain structs (the reference's encoding).
func BenchmarkMarshalMeasure(b *testing.B) {
	c := New(Options{})
	m := measureAnswer()
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 512)
		for i := 0; i < b.N; i++ {
			var err error
			if buf, err = c.Marshal(buf[:0], m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protoreflect", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 512)
		for i := 0; i < b.N; i++ {
			var err error
			if buf, err = c.marshalReflect(buf[:0], m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		type plain struct {
			Ability        int    `json:"ability"`
			AbilityDisplay string `json:"abilityDisplay"`
			Uncertainty    int    `json:"uncertainty"`
			Framework      string `json:"framework"`
			APIVersion     string `json:"apiVersion"`
			Percentile     *int   `json:"percentile,omitempty"`
			Fit            *struct {
				Infit float64 `json:"infit"`
			} `json:"fit"`
		}
		p := 63
		v := plain{Ability: 712, AbilityDisplay: "712L", Uncertainty: 41, Framework: "lexile", APIVersion: "1.4.0", Percentile: &p}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := json.Marshal(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cpuPerOp reports the process's CPU time per operation (user and system, the garbage collector's
// included) beside the wall time: on a shared machine the wall time counts time spent descheduled.
func cpuPerOp(b *testing.B, run func()) {
	b.Helper()
	start := processCPU(b)
	run()
	b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
}

func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
