package scoring

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// Answer patterns on the demo items L000001.. (difficulties spread from about -300L to 1800L in
// no order): at its MLE the first fits, the second is noisier than the model allows (misfit), the
// third is a perfect Guttman pattern over 30 items, tidier than the model allows (overfit).
const (
	fitsPattern    = "10111110000111010000"
	misfitPattern  = "1101011010110010"
	overfitPattern = "101110100001110100001011000000"
)

// fitPath is an item-result path that takes fit: the rest of its body and the unrounded
// estimate its answer reports (what fit is judged at).
type fitPath struct {
	path, extra string
	theta       func(t *testing.T, answers []measure.Answer) float64
}

const fitPrior = `"priorAbility":600,"priorUncertainty":90,"elapsedDays":60`

func fitPaths() []fitPath {
	standard := func(t *testing.T, a []measure.Answer) float64 {
		est, err := lexile(t).Standard(measure.TestOf(a))
		if err != nil {
			t.Fatal(err)
		}
		return est.Ability
	}
	bayes := func(t *testing.T, a []measure.Answer) float64 {
		fw := lexile(t)
		est, err := fw.Bayes(measure.TestOf(a), fw.Grow(measure.Normal{Mean: 600, SD: 90}, 60))
		if err != nil {
			t.Fatal(err)
		}
		return est.Ability
	}
	return []fitPath{
		{"/api/score/items/idsWithResults/standard", "", standard},
		{"/api/score/items/idsWithResults/bayes", fitPrior + ",", bayes},
		{"/api/score/items/idsWithResults/standard/strands", `"grade":3,"timeOfYear":"MOY",`, standard},
		{"/api/score/items/idsWithResults/bayes/strands", fitPrior + `,"grade":3,"timeOfYear":"MOY",`, bayes},
	}
}

// fitTail is what "fit": true appends to an answer (fit and fitNote are its last fields): the
// figures in declaration order, then the closing brace.
var fitTail = regexp.MustCompile(`^,"fit":\{"infit":([^,]+),"outfit":([^,]+),"infitZ":([^,]+),"outfitZ":([^,]+),"flag":"(misfit|overfit|)"\}\}$`)

// parseFit reads the figures of a fit tail; ok is false when the tail is not one.
func parseFit(t *testing.T, tail []byte) (measure.PersonFit, bool) {
	t.Helper()
	m := fitTail.FindSubmatch(tail)
	if m == nil {
		return measure.PersonFit{}, false
	}
	var v [4]float64
	for i := range v {
		f, err := strconv.ParseFloat(string(m[i+1]), 64)
		if err != nil {
			t.Fatalf("fit figure %s: %v", m[i+1], err)
		}
		v[i] = f
	}
	return measure.PersonFit{Infit: v[0], Outfit: v[1], InfitZ: v[2], OutfitZ: v[3], Flag: string(m[5])}, true
}

// extraTail is the part of the answer to `with` past the answer to `plain` less its closing
// brace: what asking for fit added at the end.
func extraTail(t *testing.T, plain, with servetest.Response) []byte {
	t.Helper()
	if plain.Status != 200 || with.Status != 200 {
		t.Fatalf("got %d %s and %d %s; want 200 twice", plain.Status, plain.Body, with.Status, with.Body)
	}
	prefix := plain.Body[:len(plain.Body)-1]
	if !bytes.HasPrefix(with.Body, prefix) {
		t.Fatalf("with fit %s; want the plain answer %s, then fit", with.Body, plain.Body)
	}
	return with.Body[len(prefix):]
}

// TestFitOnItemResultPaths: "fit": true appends the person fit of measure.PersonFit at the
// unrounded estimate the path reports (standard: MLE; Bayes: EAP; strands: the overall one),
// every figure at full precision, and leaves the rest of the answer byte for byte as it was; a
// zero or perfect score gets no fit and a fitNote; false, null or absent change nothing.
func TestFitOnItemResultPaths(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, p := range fitPaths() {
		for _, results := range []string{fitsPattern, misfitPattern, overfitPattern, "10", "01", "0000000000", "1111111111", "0", "1"} {
			t.Run(p.path+"/"+results, func(t *testing.T) {
				t.Parallel()
				items, answers := pattern(results)
				plain := s.Post(p.path, `{`+p.extra+`"items":`+items+`}`)
				for _, off := range []string{`"fit":false,`, `"fit":null,`} {
					r := s.Post(p.path, `{`+p.extra+off+`"items":`+items+`}`)
					if plain.Status != 200 || r.Status != 200 || !bytes.Equal(r.Body, plain.Body) || bytes.Contains(plain.Body, []byte(`"fit`)) {
						t.Fatalf("with %s got %d %s; want the plain answer %d %s, without fit", off, r.Status, r.Body, plain.Status, plain.Body)
					}
				}
				tail := extraTail(t, plain, s.Post(p.path, `{`+p.extra+`"fit":true,"items":`+items+`}`))
				want, err := lexile(t).PersonFit(p.theta(t, answers), answers)
				switch right := strings.Count(results, "1"); right {
				case 0, len(results):
					note, prefix := noFitZero, "no fit for a zero score: "
					if right > 0 {
						note, prefix = noFitPerfect, "no fit for a perfect score: "
					}
					quoted, _ := json.Marshal(note)
					if wantTail := `,"fitNote":` + string(quoted) + `}`; string(tail) != wantTail || !strings.HasPrefix(note, prefix) || err != measure.ErrExtremeScore {
						t.Errorf("got %s (PersonFit: %v); want %s, a note starting %q", tail, err, wantTail, prefix)
					}
				default:
					if err != nil {
						t.Fatal(err)
					}
					got, ok := parseFit(t, tail)
					if !ok || got != want {
						t.Errorf("got %s; want fit %+v and no note", tail, want)
					}
				}
			})
		}
	}
}

// TestFitFlagsOnTheWire: each flag reaches the answer (standard path, at the MLE).
func TestFitFlagsOnTheWire(t *testing.T) {
	t.Parallel()
	s := start(t)
	const path = "/api/score/items/idsWithResults/standard"
	for results, flag := range map[string]string{fitsPattern: "", misfitPattern: measure.MisfitFlag, overfitPattern: measure.OverfitFlag} {
		t.Run(results, func(t *testing.T) {
			t.Parallel()
			items, _ := pattern(results)
			got, ok := parseFit(t, extraTail(t, s.Post(path, `{"items":`+items+`}`), s.Post(path, `{"fit":true,"items":`+items+`}`)))
			if !ok || got.Flag != flag {
				t.Errorf("got %+v; want flag %q", got, flag)
			}
		})
	}
	if measure.MisfitFlag != "misfit" || measure.OverfitFlag != "overfit" {
		t.Errorf("flags %q, %q; want misfit, overfit (the documented values)", measure.MisfitFlag, measure.OverfitFlag)
	}
}

// TestFitWithPercentile: fit and percentile together on a non-strand path, in the order the
// documents show (percentile, then fit).
func TestFitWithPercentile(t *testing.T) {
	t.Parallel()
	s := start(t)
	const path = "/api/score/items/idsWithResults/standard"
	items, _ := pattern(misfitPattern)
	graded := s.Post(path, `{"grade":3,"timeOfYear":"MOY","items":`+items+`}`)
	if !bytes.Contains(graded.Body, []byte(`"percentile":`)) {
		t.Fatalf("got %s; want a percentile", graded.Body)
	}
	if _, ok := parseFit(t, extraTail(t, graded, s.Post(path, `{"grade":3,"timeOfYear":"MOY","fit":true,"items":`+items+`}`))); !ok {
		t.Errorf("fit is not appended after the percentile")
	}
}

// TestFitValidation: fit is a boolean, and only the item-result paths take it (elsewhere there
// are no answers to judge); on both fronts.
func TestFitValidation(t *testing.T) {
	t.Parallel()
	s := start(t)
	items, _ := pattern("1100")
	for _, c := range []struct{ name, path, body, field string }{
		{"a number", "/api/score/items/idsWithResults/standard", `{"fit":1,"items":` + items + `}`, "fit"},
		{"a string", "/api/score/items/idsWithResults/bayes", `{` + fitPrior + `,"fit":"true","items":` + items + `}`, "fit"},
		{"on item ids", "/api/score/items/ids/standard", `{"fit":true,"numberCorrect":1,"items":[{"id":"L000001"}]}`, "fit"},
		{"on a scale score", "/api/score/scale/standard", `{"fit":true,"linkId":"STATE-READ-2026","scaleScore":"480","scaleSem":18}`, "fit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post(c.path, c.body)
			var e struct{ ValidationErrors map[string][]string }
			if r.Status != 400 || json.Unmarshal(r.Body, &e) != nil || len(e.ValidationErrors[c.field]) != 1 {
				t.Errorf("got %d %s; want 400 naming %s", r.Status, r.Body, c.field)
			}
		})
	}
	// Fit takes nothing from the other checks: every problem is still named at once.
	r := s.Post("/api/score/items/idsWithResults/standard", `{"fit":true,"framework":"klingon","items":[{"id":"NOPE","result":1}]}`)
	var e struct{ ValidationErrors map[string][]string }
	if r.Status != 400 || json.Unmarshal(r.Body, &e) != nil || len(e.ValidationErrors["framework"]) != 1 || len(e.ValidationErrors["items"]) != 1 {
		t.Errorf("got %d %s; want 400 naming framework and items", r.Status, r.Body)
	}
}

// TestFitOverGRPC: the four rpcs answer the figures and notes the JSON front answers, and leave
// both fields unset when fit is not asked.
func TestFitOverGRPC(t *testing.T) {
	t.Parallel()
	s := start(t)
	client := scoringv1.NewScoringServiceClient(s.Conn)
	ctx := s.Authed(context.Background())
	type reply struct {
		fit  *scoringv1.PersonFit
		note *string
	}
	rpcs := []func(fit *bool, items []*scoringv1.ItemResult) (reply, error){
		func(fit *bool, items []*scoringv1.ItemResult) (reply, error) {
			m, err := client.ScoreItemResults(ctx, &scoringv1.ScoreItemResultsRequest{Fit: fit, Items: items})
			return reply{m.GetFit(), m.FitNote}, err
		},
		func(fit *bool, items []*scoringv1.ItemResult) (reply, error) {
			m, err := client.ScoreItemResultsBayes(ctx, &scoringv1.ScoreItemResultsBayesRequest{
				Fit: fit, Items: items, PriorAbility: ptr(600.0), PriorUncertainty: ptr(90.0), ElapsedDays: ptr(60.0),
			})
			return reply{m.GetFit(), m.FitNote}, err
		},
		func(fit *bool, items []*scoringv1.ItemResult) (reply, error) {
			m, err := client.ScoreItemResultsStrands(ctx, &scoringv1.ScoreItemResultsStrandsRequest{
				Fit: fit, Items: items, Grade: ptr(int32(3)), TimeOfYear: ptr("MOY"),
			})
			return reply{m.GetFit(), m.FitNote}, err
		},
		func(fit *bool, items []*scoringv1.ItemResult) (reply, error) {
			m, err := client.ScoreItemResultsBayesStrands(ctx, &scoringv1.ScoreItemResultsBayesStrandsRequest{
				Fit: fit, Items: items, PriorAbility: ptr(600.0), PriorUncertainty: ptr(90.0), ElapsedDays: ptr(60.0),
				Grade: ptr(int32(3)), TimeOfYear: ptr("MOY"),
			})
			return reply{m.GetFit(), m.FitNote}, err
		},
	}
	paths := fitPaths()
	for i, rpc := range rpcs {
		for _, results := range []string{misfitPattern, "0000", "1111"} {
			t.Run(paths[i].path+"/"+results, func(t *testing.T) {
				t.Parallel()
				var items []*scoringv1.ItemResult
				for j, c := range results {
					items = append(items, &scoringv1.ItemResult{Id: ptr(measureID("L", j+1)), Result: ptr(int32(c - '0'))})
				}
				for _, off := range []*bool{nil, ptr(false)} {
					if got, err := rpc(off, items); err != nil || got.fit != nil || got.note != nil {
						t.Errorf("fit %v: got %+v, %v; want neither fit nor note", off, got, err)
					}
				}
				got, err := rpc(ptr(true), items)
				if err != nil {
					t.Fatal(err)
				}
				js, _ := pattern(results)
				tail := extraTail(t, s.Post(paths[i].path, `{`+paths[i].extra+`"items":`+js+`}`), s.Post(paths[i].path, `{`+paths[i].extra+`"fit":true,"items":`+js+`}`))
				if want, ok := parseFit(t, tail); ok {
					if got.fit == nil || got.note != nil || (measure.PersonFit{Infit: got.fit.Infit, Outfit: got.fit.Outfit, InfitZ: got.fit.InfitZ, OutfitZ: got.fit.OutfitZ, Flag: got.fit.Flag}) != want {
						t.Errorf("got %v, note %v; want %+v as on JSON", got.fit, got.note, want)
					}
					return
				}
				quoted, _ := json.Marshal(got.note)
				if got.fit != nil || got.note == nil || string(tail) != `,"fitNote":`+string(quoted)+`}` {
					t.Errorf("got fit %v, note %v; JSON added %s", got.fit, got.note, tail)
				}
			})
		}
	}
}
