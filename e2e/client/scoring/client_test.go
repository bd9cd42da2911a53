package scoring_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/e2e/client/scoring"
	"github.com/yardstick-dev/yardstick/e2e/internal/live"
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
		if m.Framework != scoring.MeasureFrameworkLexile || m.ApiVersion != live.Version || !strings.HasSuffix(m.AbilityDisplay, "L") || m.Uncertainty <= 0 {
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
		// Answer every item right until maxItems: each step names a new item until the last,
		// which names none and says why.
		var items []scoring.ItemResult
		maxItems := int32(4)
		seen := map[string]bool{}
		for step := int32(0); ; step++ {
			res, err := authed.ScoringServiceNextItemWithResponse(ctx, scoring.NextItemRequest{
				Framework: scoring.NextItemRequestFrameworkQuantile, Items: &items, Stop: &scoring.StopRules{MaxItems: &maxItems},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
				t.Fatalf("step %d: got %d %s; want 200", step, res.StatusCode(), res.Body)
			}
			a := res.JSON200
			if a.ItemsAnswered != step || a.Framework != scoring.NextItemResponseFrameworkQuantile || a.ApiVersion != live.Version || !strings.HasSuffix(a.AbilityDisplay, "Q") {
				t.Fatalf("step %d: got %s", step, res.Body)
			}
			if step == maxItems {
				if a.Next != nil || a.StopReason != scoring.NextItemResponseStopReasonMaxItems || !strings.Contains(string(res.Body), `"next":null`) {
					t.Errorf("last step: got %s; want next null and stopReason maxItems", res.Body)
				}
				return
			}
			if a.Next == nil || a.StopReason != "" || seen[a.Next.Id] || !strings.HasPrefix(a.Next.Id, "Q") {
				t.Fatalf("step %d: got %s; want a new quantile item", step, res.Body)
			}
			seen[a.Next.Id] = true
			items = append(items, scoring.ItemResult{Id: a.Next.Id, Result: 1})
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
