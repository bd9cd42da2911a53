package forecast

import (
	"context"
	"encoding/json"
	"testing"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// TestWireRules: the forecast endpoints follow the same wire rules as scoring (see the scoring
// service's TestWireRules), group endpoints included, and the display rule holds on both fronts.
func TestWireRules(t *testing.T) {
	t.Parallel()
	s := start(t)
	const (
		single = "/api/forecast/reading"
		group  = "/api/forecast/reading/group"
		rest   = `"testUncertainty":32.5,"cutLevels":[600,800.5]`
	)
	for _, tc := range []struct {
		name, path, body string
		status           int
		key, msg         string
	}{
		{"a forecast's fractional ability as the next prior", single, `{"priorAbility":695.3,"priorUncertainty":60.2,"elapsedDays":180.5,` + rest + `}`, 200, "", ""},
		{"group: objects and arrays mixed", group, `{"studentData":[[695.3,60.2,180.5],{"priorAbility":500,"priorUncertainty":40,"elapsedDays":10}],` + rest + `}`, 200, "", ""},
		{"group: duplicate key", group, `{"studentData":[[500,40,10]],"testUncertainty":1,"testUncertainty":2,"cutLevels":[600]}`, 400, "testUncertainty", "appears more than once"},
		{"group: duplicate key inside an entry", group, `{"studentData":[{"priorAbility":500,"priorAbility":1,"priorUncertainty":40,"elapsedDays":10}],` + rest + `}`, 400, "studentData", "studentData[0].priorAbility: appears more than once"},
		{"group: trailing data", group, `{"studentData":[[500,40,10]],` + rest + `}{}`, 400, "nonFieldErrors", "unexpected data after the JSON object"},
		{"single: trailing data", single, `{"priorAbility":695,"priorUncertainty":60,"elapsedDays":180,` + rest + `} x`, 400, "nonFieldErrors", "unexpected data after the JSON object"},
		{"unknown field with a suggestion", single, `{"priorAbility":695,"priorUncertainty":60,"elapsedDays":180,"cutLevel":[600],"testUncertainty":1}`, 400, "cutLevel", `unknown field "cutLevel"; did you mean "cutLevels"?`},
		{"framework is accepted and ignored", single, `{"framework":"lexile","priorAbility":695,"priorUncertainty":60,"elapsedDays":180,` + rest + `}`, 200, "", ""},
		{"array entry of the wrong length", group, `{"studentData":[[1,2,3,4]],` + rest + `}`, 400, "studentData", "studentData[0]: an array entry must hold exactly 3 numbers: priorAbility, priorUncertainty, elapsedDays"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(tc.path, tc.body)
			if r.Status != tc.status {
				t.Fatalf("got %d %s; want %d", r.Status, r.Body, tc.status)
			}
			if tc.status != 400 {
				return
			}
			var e struct {
				ValidationErrors map[string][]string `json:"validationErrors"`
			}
			if err := json.Unmarshal(r.Body, &e); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, m := range e.ValidationErrors[tc.key] {
				found = found || m == tc.msg
			}
			if !found {
				t.Errorf("validationErrors: got %v; want %q under %q", e.ValidationErrors, tc.msg, tc.key)
			}
		})
	}
}

// TestDisplayAroundZero: −2.5 rounds to 0 and shows as 0L (not BR0L); −3 shows as BR5L; on both
// fronts. A forecast over 0 days keeps the prior's mean, so the prior is the displayed value.
func TestDisplayAroundZero(t *testing.T) {
	t.Parallel()
	s := start(t)
	client := forecastv1.NewForecastServiceClient(s.Conn)
	num := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		ability float64
		want    string
	}{{-2.5, "0L"}, {2, "0L"}, {0, "0L"}, {-2.6, "BR5L"}, {-3, "BR5L"}, {2.5, "5L"}} {
		got, err := client.ForecastReading(s.Authed(context.Background()), &forecastv1.ForecastRequest{
			PriorAbility: num(tc.ability), PriorUncertainty: num(50), ElapsedDays: num(0), TestUncertainty: num(0), CutLevels: []float64{500},
		})
		if err != nil || got.GetAbility() != tc.ability || got.GetAbilityDisplay() != tc.want {
			t.Errorf("gRPC prior %v: got %v, %v; want ability %v shown as %s", tc.ability, got, err, tc.ability, tc.want)
		}
		body, _ := json.Marshal(map[string]any{"priorAbility": tc.ability, "priorUncertainty": 50, "elapsedDays": 0, "testUncertainty": 0, "cutLevels": []float64{500}})
		r := s.Post("/api/forecast/reading", string(body))
		var f struct {
			AbilityDisplay string `json:"abilityDisplay"`
		}
		if err := json.Unmarshal(r.Body, &f); err != nil || f.AbilityDisplay != tc.want {
			t.Errorf("JSON prior %v: got %d %s; want abilityDisplay %s", tc.ability, r.Status, r.Body, tc.want)
		}
	}
}
