package scoring

import (
	"encoding/json"
	"fmt"
	"github.com/yardstick-dev/yardstick/services/servetest"
	"reflect"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

type measureBody struct {
	Ability        int    `json:"ability"`
	AbilityDisplay string `json:"abilityDisplay"`
	Uncertainty    int    `json:"uncertainty"`
	Framework      string `json:"framework"`
	Strands        []struct {
		Name        string `json:"name"`
		Category    int    `json:"category"`
		Ability     *int   `json:"ability"`
		Uncertainty *int   `json:"uncertainty"`
	} `json:"strands"`
}

func decode(t *testing.T, status int, body []byte) measureBody {
	t.Helper()
	if status != 200 {
		t.Fatalf("got %d %s; want 200", status, body)
	}
	var m measureBody
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMeasuresFollowTheMethod checks values that follow from docs/method.md on the real demo content.
func TestMeasuresFollowTheMethod(t *testing.T) {
	t.Parallel()
	s := start(t)
	post := func(path, body string) measureBody {
		r := s.Post(path, body)
		return decode(t, r.Status, r.Body)
	}

	t.Run("more correct answers give a higher ability", func(t *testing.T) {
		prev := -1 << 30
		for _, r := range []int{0, 5, 10, 15, 20} {
			m := post("/api/score/items/idsWithResults/standard", `{"items":`+items(20, r, "L")+`}`)
			if m.Ability <= prev {
				t.Errorf("raw score %d: ability %d; want above %d", r, m.Ability, prev)
			}
			prev = m.Ability
		}
	})
	t.Run("number correct equals any pattern with that raw score", func(t *testing.T) {
		a := post("/api/score/items/idsWithResults/standard", `{"items":`+items(20, 8, "L")+`}`)
		b := post("/api/score/items/ids/standard", `{"items":`+ids(20, "L")+`,"numberCorrect":8}`)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("pattern %+v; number correct %+v; want equal", a, b)
		}
	})
	t.Run("a Bayes answer is tighter than the standard one", func(t *testing.T) {
		std := post("/api/score/items/idsWithResults/standard", `{"items":`+items(20, 12, "L")+`}`)
		bay := post("/api/score/items/idsWithResults/bayes", `{"items":`+items(20, 12, "L")+`,"priorAbility":`+fmt.Sprint(std.Ability)+`,"priorUncertainty":100,"elapsedDays":0}`)
		if bay.Uncertainty >= std.Uncertainty {
			t.Errorf("Bayes uncertainty %d; want below standard %d", bay.Uncertainty, std.Uncertainty)
		}
	})
	t.Run("framework comes from the item bank", func(t *testing.T) {
		if m := post("/api/score/items/ids/standard", `{"items":`+ids(5, "Q")+`,"numberCorrect":2}`); m.Framework != "quantile" || !strings.HasSuffix(m.AbilityDisplay, "Q") {
			t.Errorf("Q items: got %+v; want quantile with a Q label", m)
		}
		if m := post("/api/score/items/ids/standard", `{"items":`+ids(5, "S")+`,"numberCorrect":2}`); m.Framework != "lexile" {
			t.Errorf("S items: got %+v; want lexile", m)
		}
	})
	t.Run("scale score: standard is the link's measure, Bayes lies between prior and it", func(t *testing.T) {
		link, _ := measure.Demo().Link("STATE-READ-2026")
		obs, err := link.Measure(600, 20)
		if err != nil {
			t.Fatal(err)
		}
		std := post("/api/score/scale/standard", `{"linkId":"STATE-READ-2026","scaleScore":"600","scaleSem":20}`)
		if std.Ability != measure.Round(obs.Mean) || std.Uncertainty != measure.Round(obs.SD) {
			t.Errorf("standard: got %d±%d; want %d±%d", std.Ability, std.Uncertainty, measure.Round(obs.Mean), measure.Round(obs.SD))
		}
		bay := post("/api/score/scale/bayes", `{"linkId":"STATE-READ-2026","scaleScore":"600","scaleSem":20,"priorAbility":200,"priorUncertainty":80,"elapsedDays":0}`)
		if bay.Ability <= 200 || bay.Ability >= std.Ability || bay.Uncertainty >= std.Uncertainty {
			t.Errorf("Bayes: got %d±%d; want between 200 and %d and tighter than %d", bay.Ability, bay.Uncertainty, std.Ability, std.Uncertainty)
		}
	})
	t.Run("strands: one per strand present, categories 1-3", func(t *testing.T) {
		b := measure.Demo()
		want := map[string]bool{}
		for i := 1; i <= 30; i++ {
			it, _ := b.Item(fmt.Sprintf("L%06d", i))
			want[it.Strand] = true
		}
		for _, path := range []string{"/api/score/items/idsWithResults/standard/strands", "/api/score/items/idsWithResults/bayes/strands"} {
			prior := ""
			if strings.Contains(path, "bayes") {
				prior = `"priorAbility":700,"priorUncertainty":90,"elapsedDays":30,`
			}
			m := post(path, `{"grade":5,"timeOfYear":"MOY",`+prior+`"items":`+items(30, 15, "L")+`}`)
			checkStrands(t, path, m, want)
		}
	})
	t.Run("grade caps the display", func(t *testing.T) {
		m := post("/api/score/items/idsWithResults/standard/strands", `{"grade":0,"timeOfYear":"EOY","items":`+items(30, 30, "L")+`}`)
		fw, _ := measure.Demo().Framework("lexile")
		capK := int(fw.GradeMax[0])
		if m.Ability <= capK || m.AbilityDisplay != fmt.Sprintf("%dL", capK) {
			t.Errorf("kindergarten, all correct: got %d shown as %s; want above %d shown as %dL", m.Ability, m.AbilityDisplay, capK, capK)
		}
	})
}

// checkStrands holds the strands of the answer m on path: one per strand of want, each of category
// 1 to 3, with an ability and an uncertainty on the Bayes paths only.
func checkStrands(t *testing.T, path string, m measureBody, want map[string]bool) {
	t.Helper()
	got := map[string]bool{}
	for _, st := range m.Strands {
		got[st.Name] = true
		if st.Category < 1 || st.Category > 3 {
			t.Errorf("%s: strand %s category %d; want 1, 2 or 3", path, st.Name, st.Category)
		}
		bayes := strings.Contains(path, "bayes")
		if (st.Ability != nil) != bayes || (st.Uncertainty != nil) != bayes {
			t.Errorf("%s: strand %+v; ability and uncertainty belong to the Bayes strands only", path, st)
		}
	}
	if len(got) != len(want) || len(m.Strands) != len(want) {
		t.Errorf("%s: strands %v; want one each of %v", path, got, want)
	}
}

// TestValidation checks each rule of docs/api.md: a 400 naming the right field path.
func TestValidation(t *testing.T) {
	t.Parallel()
	s := start(t)
	prior := `"priorAbility":500,"priorUncertainty":80,"elapsedDays":30`
	for _, tc := range []struct {
		name, path, body string
		fields           []string
	}{
		{"empty body", "/api/score/items/idsWithResults/standard", `{}`, []string{"items"}},
		{"items not an array", "/api/score/items/idsWithResults/standard", `{"items":5}`, []string{"items"}},
		{"null item", "/api/score/items/idsWithResults/standard", `{"items":[null]}`, []string{"items[0]"}},
		{"unknown item", "/api/score/items/idsWithResults/standard", `{"items":[{"id":"L000001","result":1},{"id":"NOPE","result":0}]}`, []string{"items[1].id"}},
		{"result not 0 or 1", "/api/score/items/idsWithResults/standard", `{"items":[{"id":"L000001","result":2}]}`, []string{"items[0].result"}},
		{"result missing", "/api/score/items/idsWithResults/standard", `{"items":[{"id":"L000001"}]}`, []string{"items[0].result"}},
		{"result of the wrong type", "/api/score/items/idsWithResults/standard", `{"items":[{"id":"L000001","result":"yes"}]}`, []string{"items[0].result"}},
		{"duplicate ids", "/api/score/items/idsWithResults/standard", `{"items":[{"id":"L000001","result":1},{"id":"L000001","result":0}]}`, []string{"items[1].id"}},
		{"mixed frameworks", "/api/score/items/idsWithResults/standard", `{"items":[{"id":"L000001","result":1},{"id":"Q000001","result":0}]}`, []string{"nonFieldErrors"}},
		{"framework disagrees", "/api/score/items/idsWithResults/standard", `{"framework":"quantile","items":[{"id":"L000001","result":1}]}`, []string{"nonFieldErrors"}},
		{"framework unknown", "/api/score/items/idsWithResults/standard", `{"framework":"rasch","items":[{"id":"L000001","result":1}]}`, []string{"framework"}},
		{"numberCorrect missing", "/api/score/items/ids/standard", `{"items":[{"id":"L000001"}]}`, []string{"numberCorrect"}},
		{"numberCorrect above n", "/api/score/items/ids/standard", `{"items":[{"id":"L000001"}],"numberCorrect":2}`, []string{"nonFieldErrors"}},
		{"numberCorrect negative", "/api/score/items/ids/standard", `{"items":[{"id":"L000001"}],"numberCorrect":-1}`, []string{"numberCorrect"}},
		{"ids bayes prefix", "/api/score/items/ids/bayes", `{"items":[{"id":"X000001"}],"numberCorrect":0,` + prior + `}`, []string{"items[0].id"}},
		{"bayes strands priors named", "/api/score/items/idsWithResults/bayes/strands", `{"grade":3,"timeOfYear":"MOY","items":[{"id":"L000001","result":1}]}`, []string{"priorAbility", "priorUncertainty", "elapsedDays"}},
		{"priorUncertainty not positive", "/api/score/items/idsWithResults/bayes", `{"items":[{"id":"L000001","result":1}],"priorAbility":500,"priorUncertainty":0,"elapsedDays":3}`, []string{"priorUncertainty"}},
		{"elapsedDays negative", "/api/score/items/idsWithResults/bayes", `{"items":[{"id":"L000001","result":1}],"priorAbility":500,"priorUncertainty":50,"elapsedDays":-3}`, []string{"elapsedDays"}},
		{"grade out of range", "/api/score/items/idsWithResults/standard/strands", `{"grade":13,"timeOfYear":"MOY","items":[{"id":"L000001","result":1}]}`, []string{"grade"}},
		{"timeOfYear unknown", "/api/score/items/idsWithResults/standard/strands", `{"grade":3,"timeOfYear":"SUMMER","items":[{"id":"L000001","result":1}]}`, []string{"timeOfYear"}},
		{"strands: all missing", "/api/score/items/idsWithResults/standard/strands", `{}`, []string{"grade", "timeOfYear", "items"}},
		{"difficulties: framework required", "/api/score/items/difficulties/bayes", `{"items":[{"difficulty":500}],"numberCorrect":1,` + prior + `}`, []string{"framework"}},
		{"difficulties: count below 1", "/api/score/items/difficulties/bayes", `{"framework":"lexile","items":[{"difficulty":500,"count":0}],"numberCorrect":0,` + prior + `}`, []string{"items[0].count"}},
		{"difficulties: difficulty missing", "/api/score/items/difficulties/bayes", `{"framework":"lexile","items":[{"count":2}],"numberCorrect":0,` + prior + `}`, []string{"items[0].difficulty"}},
		{"difficulties: numberCorrect above total count", "/api/score/items/difficulties/bayes", `{"framework":"lexile","items":[{"difficulty":500,"count":2}],"numberCorrect":3,` + prior + `}`, []string{"nonFieldErrors"}},
		{"scale: link unknown", "/api/score/scale/standard", `{"linkId":"NOPE","scaleScore":"500","scaleSem":10}`, []string{"linkId"}},
		{"scale: score not a number", "/api/score/scale/standard", `{"linkId":"STATE-READ-2026","scaleScore":"five hundred","scaleSem":10}`, []string{"scaleScore"}},
		{"scale: score out of range", "/api/score/scale/standard", `{"linkId":"STATE-READ-2026","scaleScore":"9000","scaleSem":10}`, []string{"scaleScore"}},
		{"scale: sem not positive", "/api/score/scale/standard", `{"linkId":"STATE-READ-2026","scaleScore":"500","scaleSem":0}`, []string{"scaleSem"}},
		{"scale: all missing", "/api/score/scale/bayes", `{}`, []string{"linkId", "scaleScore", "scaleSem", "priorAbility", "priorUncertainty", "elapsedDays"}},
		{"prior ability out of range", "/api/score/items/idsWithResults/bayes", `{"items":[{"id":"L000001","result":1}],"priorAbility":30000000,"priorUncertainty":1,"elapsedDays":0}`, []string{"priorAbility"}},
		{"prior uncertainty and days out of range", "/api/score/items/ids/bayes", `{"items":[{"id":"L000001"}],"numberCorrect":1,"priorAbility":500,"priorUncertainty":2147483647,"elapsedDays":2147483647}`, []string{"priorUncertainty", "elapsedDays"}},
		{"difficulty out of range", "/api/score/items/difficulties/bayes", `{"framework":"lexile","items":[{"difficulty":-100000},{"difficulty":100000}],"numberCorrect":1,` + prior + `}`, []string{"items[0].difficulty", "items[1].difficulty"}},
		{"scale: sem out of range", "/api/score/scale/standard", `{"linkId":"STATE-READ-2026","scaleScore":"500","scaleSem":2147483647}`, []string{"scaleSem"}},
		{"scale: Go number syntax is not a score", "/api/score/scale/standard", `{"linkId":"STATE-READ-2026","scaleScore":"5_00","scaleSem":10}`, []string{"scaleScore"}},
		{"scale: hex float is not a score", "/api/score/scale/standard", `{"linkId":"STATE-READ-2026","scaleScore":"0x1p9","scaleSem":10}`, []string{"scaleScore"}},
		{"unknown framework named beside a bad item", "/api/score/items/ids/standard", `{"items":[{"id":"BAD"}],"framework":"foo","numberCorrect":0}`, []string{"items[0].id", "framework"}},
		{"unknown form and negative numberCorrect", "/api/score/form/id/standard", `{"formId":"NOPE","numberCorrect":-1}`, []string{"formId", "numberCorrect"}},
		{"form unknown", "/api/score/form/id/standard", `{"formId":"NOPE","numberCorrect":1}`, []string{"formId"}},
		{"form numberCorrect above length", "/api/score/form/id/standard", `{"formId":"FORM-READ-G3","numberCorrect":31}`, []string{"nonFieldErrors"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(tc.path, tc.body)
			if r.Status != 400 {
				t.Fatalf("got %d %s; want 400", r.Status, r.Body)
			}
			var e struct {
				ExceptionType    string              `json:"exceptionType"`
				ValidationErrors map[string][]string `json:"validationErrors"`
			}
			if err := json.Unmarshal(r.Body, &e); err != nil {
				t.Fatal(err)
			}
			if e.ExceptionType != "ValidationError" {
				t.Errorf("exceptionType: got %q; want ValidationError", e.ExceptionType)
			}
			for _, f := range tc.fields {
				if !servetest.HasProblem(e.ValidationErrors, f) {
					t.Errorf("validationErrors: got %v; want an entry for %q", e.ValidationErrors, f)
				}
			}
		})
	}
}

func TestItemLimit(t *testing.T) {
	t.Parallel()
	s := start(t)
	r := s.Post("/api/score/items/ids/standard", `{"items":`+ids(5001, "L")+`,"numberCorrect":1}`)
	if r.Status != 400 || !strings.Contains(string(r.Body), "limit is 5000") {
		t.Errorf("5,001 items: got %d %s; want 400 naming the limit", r.Status, r.Body)
	}
}
