package scoring_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/e2e/client/scoring"
	"github.com/yardstick-dev/yardstick/e2e/internal/live"
	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// TestGeneratedClient: the client oapi-codegen generates from scoring.openapi.json logs in at
// /authToken (JSON and form) and scores, against the real scoring binary.
func TestGeneratedClient(t *testing.T) {
	t.Parallel()
	svc := live.Start(t, "scoring")
	ctx := context.Background()
	c, err := scoring.NewClientWithResponses(svc.Base)
	if err != nil {
		t.Fatal(err)
	}

	login, err := c.TokenServiceIssueTokenWithResponse(ctx, scoring.IssueTokenRequest{ClientId: "demo", ClientSecret: "demo-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if login.StatusCode() != http.StatusOK || login.JSON200 == nil {
		t.Fatalf("authToken: got %d %s; want 200", login.StatusCode(), login.Body)
	}
	tok, err := login.JSON200.AsIssueTokenResponse()
	if err != nil || tok.AccessToken == "" || tok.ExpiresIn != 86400 {
		t.Fatalf("authToken answer: got %+v (%v); want a token for 86400 s", tok, err)
	}
	bearer := scoring.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		return nil
	})
	authed, err := scoring.NewClientWithResponses(svc.Base, bearer)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("score", func(t *testing.T) {
		res, err := authed.ScoringServiceScoreItemResultsWithResponse(ctx, scoring.ScoreItemResultsRequest{
			Items: []scoring.ItemResult{{Id: "L000100", Result: 1}, {Id: "L000200", Result: 0}, {Id: "L000300", Result: 1}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
			t.Fatalf("got %d %s; want 200", res.StatusCode(), res.Body)
		}
		m := res.JSON200
		if m.Framework != "lexile" || m.ApiVersion != live.Version || !strings.HasSuffix(m.AbilityDisplay, "L") || m.Uncertainty <= 0 {
			t.Errorf("measure: got %+v; want a lexile measure of version %s", m, live.Version)
		}
	})

	t.Run("person fit", func(t *testing.T) {
		// A mixed score has fit (the misfit pattern of docs/examples.md); a perfect one has a note
		// instead; without fit: true, neither.
		var mixed, perfect []scoring.ItemResult
		for i, r := range "1101011010110010" {
			id := fmt.Sprintf("L%06d", i+1)
			mixed = append(mixed, scoring.ItemResult{Id: id, Result: int32(r - '0')})
			perfect = append(perfect, scoring.ItemResult{Id: id, Result: 1})
		}
		yes := true
		for _, c := range []struct {
			name       string
			items      []scoring.ItemResult
			fit        *bool
			fitAndNote [2]bool
		}{
			{"mixed", mixed, &yes, [2]bool{true, false}},
			{"perfect", perfect, &yes, [2]bool{false, true}},
			{"not asked", mixed, nil, [2]bool{false, false}},
		} {
			res, err := authed.ScoringServiceScoreItemResultsWithResponse(ctx, scoring.ScoreItemResultsRequest{Items: c.items, Fit: c.fit})
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
				t.Fatalf("%s: got %d %s; want 200", c.name, res.StatusCode(), res.Body)
			}
			m := res.JSON200
			if got := [2]bool{m.Fit != nil, m.FitNote != nil}; got != c.fitAndNote {
				t.Errorf("%s: got %s; want fit, fitNote present: %v", c.name, res.Body, c.fitAndNote)
			}
			if m.Fit != nil && (m.Fit.Flag != scoring.PersonFitFlagMisfit || m.Fit.Infit <= 1 || m.Fit.Outfit <= 1 || m.Fit.InfitZ <= 1.96) {
				t.Errorf("%s: got fit %+v; want a misfit with both mean squares above 1", c.name, *m.Fit)
			}
		}
	})

	t.Run("invalid input is the documented 400", func(t *testing.T) {
		res, err := authed.ScoringServiceScoreItemResultsWithResponse(ctx, scoring.ScoreItemResultsRequest{
			Items: []scoring.ItemResult{{Id: "L000100", Result: 7}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusBadRequest || res.JSON400 == nil {
			t.Fatalf("got %d %s; want 400", res.StatusCode(), res.Body)
		}
		e := res.JSON400
		// Keyed by the top-level field, as the document says.
		if e.ExceptionType != scoring.ErrorExceptionTypeValidationError || e.ValidationErrors == nil || len(e.ValidationErrors.AdditionalProperties["items"]) == 0 {
			t.Errorf("400 body: got %s; want a ValidationError with errors under items", res.Body)
		}
	})

	t.Run("no token is the documented 401", func(t *testing.T) {
		res, err := c.ScoringServiceScoreItemResultsWithResponse(ctx, scoring.ScoreItemResultsRequest{
			Items: []scoring.ItemResult{{Id: "L000100", Result: 1}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusUnauthorized || res.JSON401 == nil || res.JSON401.ExceptionType != scoring.ErrorExceptionTypeNotAuthenticated {
			t.Errorf("got %d %s; want 401 NotAuthenticated", res.StatusCode(), res.Body)
		}
	})

	t.Run("adaptive session", func(t *testing.T) {
		// Answer every item right (a partial credit item at its maximum score, next.maxScore)
		// until maxItems: each step names a new item until the last, which names none and says why.
		var items []scoring.ItemResult
		maxItems := int32(4)
		seen := map[string]bool{}
		for step := int32(0); ; step++ {
			res, err := authed.ScoringServiceNextItemWithResponse(ctx, scoring.NextItemRequest{
				Framework: "quantile", Items: &items, Stop: &scoring.StopRules{MaxItems: &maxItems},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
				t.Fatalf("step %d: got %d %s; want 200", step, res.StatusCode(), res.Body)
			}
			a := res.JSON200
			if a.ItemsAnswered != step || a.Framework != "quantile" || a.ApiVersion != live.Version || !strings.HasSuffix(a.AbilityDisplay, "Q") {
				t.Fatalf("step %d: got %s", step, res.Body)
			}
			if step == maxItems {
				if a.Next != nil || a.StopReason != scoring.NextItemResponseStopReasonMaxItems || !strings.Contains(string(res.Body), `"next":null`) {
					t.Errorf("last step: got %s; want next null and stopReason maxItems", res.Body)
				}
				return
			}
			if a.Next == nil || a.StopReason != "" || seen[a.Next.Id] || !strings.HasPrefix(a.Next.Id, "Q") || a.Next.MaxScore < 1 {
				t.Fatalf("step %d: got %s; want a new quantile item", step, res.Body)
			}
			seen[a.Next.Id] = true
			items = append(items, scoring.ItemResult{Id: a.Next.Id, Result: a.Next.MaxScore})
		}
	})

	t.Run("partial credit", func(t *testing.T) {
		// LP00006 is the demo bundle's lexile item scored 0–3: a result of 3 is a perfect score of
		// points, 4 is refused naming items[0].result and the maximum.
		for _, c := range []struct {
			result int32
			status int
		}{{0, http.StatusOK}, {3, http.StatusOK}, {4, http.StatusBadRequest}, {-1, http.StatusBadRequest}} {
			res, err := authed.ScoringServiceScoreItemResultsWithResponse(ctx, scoring.ScoreItemResultsRequest{
				Items: []scoring.ItemResult{{Id: "LP00006", Result: c.result}, {Id: "L000100", Result: 1}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode() != c.status {
				t.Fatalf("result %d: got %d %s; want %d", c.result, res.StatusCode(), res.Body, c.status)
			}
			want := fmt.Sprintf(`items[0].result: must be 0 … 3 (the maximum score of item \"LP00006\"), got %d`, c.result)
			if c.status == http.StatusBadRequest && (res.JSON400 == nil || !strings.Contains(string(res.Body), want)) {
				t.Errorf("result %d: got %s; want %s", c.result, res.Body, want)
			}
		}
		// The same item as steps on the difficulties path answers as the bank's item.
		item, ok := measure.Demo().Item("LP00006")
		if !ok || item.MaxScore() != 3 {
			t.Fatalf("the demo bundle's LP00006 is not an item scored 0–3: %+v", item)
		}
		steps := item.Steps
		diff, err := authed.ScoringServiceScoreDifficultiesBayesWithResponse(ctx, scoring.ScoreDifficultiesBayesRequest{
			Items: []scoring.ItemDifficulty{{Steps: &steps}}, NumberCorrect: 2, Framework: "lexile",
			PriorAbility: 1500, PriorUncertainty: 200, ElapsedDays: 0,
		})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := authed.ScoringServiceScoreItemResultsBayesWithResponse(ctx, scoring.ScoreItemResultsBayesRequest{
			Items: []scoring.ItemResult{{Id: "LP00006", Result: 2}}, PriorAbility: 1500, PriorUncertainty: 200, ElapsedDays: 0,
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff.StatusCode() != http.StatusOK || ids.StatusCode() != http.StatusOK || string(diff.Body) != string(ids.Body) {
			t.Errorf("steps: got %d %s; the item's results: %d %s; want the same answer", diff.StatusCode(), diff.Body, ids.StatusCode(), ids.Body)
		}
		// The adaptive answer's next carries the item's maximum score.
		for _, c := range []struct {
			id       string
			maxScore int32
		}{{"LP00006", 3}, {"LP00001", 2}, {"L000100", 1}} {
			pool := []string{c.id}
			res, err := authed.ScoringServiceNextItemWithResponse(ctx, scoring.NextItemRequest{Framework: "lexile", Pool: &pool})
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode() != http.StatusOK || res.JSON200 == nil || res.JSON200.Next == nil || res.JSON200.Next.Id != c.id || res.JSON200.Next.MaxScore != c.maxScore {
				t.Errorf("pool %s: got %d %s; want next %s with maxScore %d", c.id, res.StatusCode(), res.Body, c.id, c.maxScore)
			}
		}
	})

	t.Run("form login", func(t *testing.T) {
		id, secret := "demo", "demo-secret"
		res, err := c.TokenServiceIssueTokenWithFormdataBodyWithResponse(ctx, scoring.TokenForm{ClientId: &id, ClientSecret: &secret})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
			t.Fatalf("got %d %s; want 200", res.StatusCode(), res.Body)
		}
		if tok, err := res.JSON200.AsIssueTokenResponse(); err != nil || tok.AccessToken == "" {
			t.Errorf("form login answer: got %s; want {accessToken, expiresIn}", res.Body)
		}
	})
}
