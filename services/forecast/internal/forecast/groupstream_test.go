package forecast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// TestGroupStreamEqualsUnary: the group stream of N students answers each valid student with
// its entry of the unary group answer for the valid students, byte for byte, each invalid one
// with a 400 line in its place, and ends with the unary answer's group.
func TestGroupStreamEqualsUnary(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, tc := range []struct {
		name, path, unary, settings string
		n                           int
	}{
		{"reading", "/api/forecast/reading/group/stream", "/api/forecast/reading/group", `{"testUncertainty":32.5,"cutLevels":[500,650,800]}`, 3000},
		{"math with framework", "/api/forecast/math/group/stream", "/api/forecast/math/group", `{"framework":"quantile","testUncertainty":20,"cutLevels":[300,700]}`, 500},
		{"reading with percentile", "/api/forecast/reading/group/stream", "/api/forecast/reading/group", `{"testUncertainty":30,"cutLevels":[600],"grade":4,"timeOfYear":"EOY"}`, 200},
		{"one student", "/api/forecast/math/group/stream", "/api/forecast/math/group", `{"testUncertainty":0,"cutLevels":[400,500,600,700]}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream, valid, invalidLines, invalidTexts := groupStreamInput(tc.settings, tc.n)
			// The unary answer for the valid students.
			var settings map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tc.settings), &settings); err != nil {
				t.Fatal(err)
			}
			settings["studentData"] = json.RawMessage("[" + strings.Join(valid, ",") + "]")
			body, _ := json.Marshal(settings)
			unary := s.Post(tc.unary, string(body))
			if unary.Status != http.StatusOK {
				t.Fatalf("unary: %d %s", unary.Status, unary.Body)
			}
			var u struct {
				Forecasts struct {
					Students []json.RawMessage `json:"students"`
					Group    json.RawMessage   `json:"group"`
				} `json:"forecasts"`
			}
			if err := json.Unmarshal(unary.Body, &u); err != nil {
				t.Fatal(err)
			}
			got := s.Batch(tc.path, stream)
			if got.Status != http.StatusOK || got.Header.Get("Content-Type") != "application/x-ndjson" {
				t.Fatalf("stream: %d %s", got.Status, got.Body)
			}
			lines := strings.Split(strings.TrimSuffix(string(got.Body), "\n"), "\n")
			if len(lines) != tc.n+1 {
				t.Fatalf("%d lines for %d students", len(lines), tc.n)
			}
			v, inv := 0, 0
			for _, line := range lines[:tc.n] {
				if strings.HasPrefix(line, `{"line":`) && inv < len(invalidLines) {
					want := fmt.Sprintf(`{"line":%d,"status":400,"body":{"message":"Invalid input."`, invalidLines[inv])
					if !strings.HasPrefix(line, want) {
						t.Errorf("invalid student: %s; want %s…", line, want)
					}
					if inv < 3 { // its body is the unary group's of this one student
						settings["studentData"] = json.RawMessage("[" + invalidTexts[inv] + "]")
						body, _ := json.Marshal(settings)
						u := s.Post(tc.unary, string(body))
						if want := fmt.Sprintf(`{"line":%d,"status":%d,"body":%s}`, invalidLines[inv], u.Status, bytes.TrimSpace(u.Body)); line != want {
							t.Errorf("invalid student:\nstream %s\nunary  %s", line, want)
						}
					}
					inv++
					continue
				}
				if v >= len(u.Forecasts.Students) || line != string(u.Forecasts.Students[v]) {
					t.Fatalf("student %d:\nstream %s\nunary  %s", v, line, u.Forecasts.Students[min(v, len(u.Forecasts.Students)-1)])
				}
				v++
			}
			if v != len(valid) || inv != len(invalidLines) {
				t.Errorf("%d entries and %d errors; want %d and %d", v, inv, len(valid), len(invalidLines))
			}
			if want := `{"group":` + string(u.Forecasts.Group) + `}`; lines[tc.n] != want {
				t.Errorf("group:\nstream %s\nunary  %s", lines[tc.n], want)
			}
		})
	}
}

// TestGroupStreamRefusals: what the whole request is answered before any line.
func TestGroupStreamRefusals(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, tc := range []struct {
		name, body, ctype string
		status            int
		wantIn            string
	}{
		{"settings invalid", `{"testUncertainty":-1,"cutLevels":[800,500]}` + "\n[600,50,10]\n", "application/x-ndjson", 400, `"cutLevels":["cutLevels[1]: must be greater`},
		{"settings with students", `{"testUncertainty":1,"cutLevels":[500],"studentData":[[1,1,1]]}` + "\n", "application/x-ndjson", 400, `"studentData":["is not part of the settings line`},
		{"unknown settings field", `{"testUncertainty":1,"cutLevels":[500],"cutLevel":1}` + "\n", "application/x-ndjson", 400, `unknown field`},
		{"empty body", "", "application/x-ndjson", 400, `the body is empty`},
		{"json", `{"testUncertainty":1,"cutLevels":[500]}`, "application/json", 415, `"additionalInfo":"Send Content-Type: application/x-ndjson."`},
		{"no students", `{"testUncertainty":1,"cutLevels":[500]}` + "\n\n", "application/x-ndjson", 200, `{"group":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Do(http.MethodPost, "/api/forecast/reading/group/stream", tc.ctype, tc.body, "Authorization", "Bearer "+s.Token())
			if r.Status != tc.status || !strings.Contains(string(r.Body), tc.wantIn) {
				t.Errorf("got %d %s; want %d with %s", r.Status, r.Body, tc.status, tc.wantIn)
			}
		})
	}
}

// groupStreamInput is a group stream of n random students after settings: about one in four
// invalid (a negative uncertainty, or a string for a number), a blank line every 97, the first
// student always valid and an array. It returns the stream, the valid students' lines, and the
// line numbers and texts of the invalid ones.
func groupStreamInput(settings string, n int) (stream string, valid []string, invalidLines []int, invalidTexts []string) {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	var b strings.Builder
	b.WriteString(settings + "\n")
	lineNo := 1 // the settings
	for i := range n {
		lineNo++
		a, u, d := 100+r.Float64()*1200, 5+r.Float64()*150, float64(r.IntN(400))
		line, ok := fmt.Sprintf(`{"priorAbility":%v,"priorUncertainty":%v,"elapsedDays":%v}`, a, u, d), true
		switch kind := r.IntN(8); {
		case i == 0 || kind == 0:
			line = fmt.Sprintf(`[%v,%v,%v]`, a, u, d)
		case kind == 1:
			line, ok = fmt.Sprintf(`{"priorAbility":%v,"priorUncertainty":-1,"elapsedDays":%v}`, a, d), false
		case kind == 2:
			line, ok = `{"priorAbility":"x"}`, false
		}
		if ok {
			valid = append(valid, line)
		} else {
			invalidLines, invalidTexts = append(invalidLines, lineNo), append(invalidTexts, line)
		}
		b.WriteString(line + "\n")
		if i%97 == 0 {
			b.WriteString("\n") // blank lines count in line numbers, get no answer
			lineNo++
		}
	}
	return b.String(), valid, invalidLines, invalidTexts
}
