package forecast_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/yardstick-dev/yardstick/e2e/client/forecast"
	"github.com/yardstick-dev/yardstick/e2e/internal/live"
)

// TestGroupForecastBothEntryShapes: the generated forecast client sends studentData entries in
// both documented shapes, an object and an array of three numbers, and the real forecast binary
// answers one forecast per entry, the same for the same student.
func TestGroupForecastBothEntryShapes(t *testing.T) {
	t.Parallel()
	svc := live.Start(t, "forecast")
	ctx := context.Background()
	c, err := forecast.NewClientWithResponses(svc.Base)
	if err != nil {
		t.Fatal(err)
	}
	login, err := c.TokenServiceIssueTokenWithResponse(ctx, forecast.IssueTokenRequest{ClientId: "demo", ClientSecret: "demo-secret"})
	if err != nil || login.JSON200 == nil {
		t.Fatalf("authToken: got %v %s", err, login.Body)
	}
	tok, err := login.JSON200.AsIssueTokenResponse()
	if err != nil {
		t.Fatal(err)
	}
	bearer := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		return nil
	}

	var asObject, asArray forecast.GroupForecastRequest_StudentData_Item
	if err := asObject.FromStudentData(forecast.StudentData{PriorAbility: 700, PriorUncertainty: 80, ElapsedDays: 90}); err != nil {
		t.Fatal(err)
	}
	if err := asArray.FromGroupForecastRequestStudentData1([]float64{700, 80, 90}); err != nil {
		t.Fatal(err)
	}
	res, err := c.ForecastServiceForecastReadingGroupWithResponse(ctx, forecast.GroupForecastRequest{
		StudentData:     []forecast.GroupForecastRequest_StudentData_Item{asObject, asArray},
		TestUncertainty: 30,
		CutLevels:       []float64{600, 800},
	}, bearer)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
		t.Fatalf("got %d %s; want 200", res.StatusCode(), res.Body)
	}
	students := res.JSON200.Forecasts.Students
	if len(students) != 2 {
		t.Fatalf("got %d student forecasts; want 2", len(students))
	}
	if students[0].Ability != students[1].Ability || len(students[0].Probabilities) != 3 {
		t.Errorf("students: got %+v; want two equal forecasts with 3 band probabilities", students)
	}
	if res.JSON200.Framework != "lexile" || res.JSON200.ApiVersion != live.Version {
		t.Errorf("got framework %q version %q; want lexile %s", res.JSON200.Framework, res.JSON200.ApiVersion, live.Version)
	}
}
