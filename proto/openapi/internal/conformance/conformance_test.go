package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/yardstick-dev/yardstick/proto/openapi"
	"github.com/yardstick-dev/yardstick/proto/yardstick"
)

var services = map[string]string{"scoring": "/yardstick.scoring.v1.", "forecast": "/yardstick.forecast.v1."}

// load returns a service's served document, validated by kin-openapi as OpenAPI 3.0.
func load(t *testing.T, service string) *openapi3.T {
	t.Helper()
	raw, err := openapi.Document(service, "v1.2.3-test")
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("%s: load: %v", service, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s: not valid OpenAPI 3: %v", service, err)
	}
	return doc
}

func TestDocumentIsValidOpenAPI3WithTheBuildVersion(t *testing.T) {
	t.Parallel()
	for service := range services {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			doc := load(t, service)
			if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
				t.Errorf("openapi: got %q; want 3.0.x", doc.OpenAPI)
			}
			if doc.Info.Version != "v1.2.3-test" {
				t.Errorf("info.version: got %q; want v1.2.3-test", doc.Info.Version)
			}
			if want := "Yardstick " + service + " API"; doc.Info.Title != want {
				t.Errorf("info.title: got %q; want %q", doc.Info.Title, want)
			}
		})
	}
	if _, err := openapi.Document("nosuch", "dev"); err == nil {
		t.Error("openapi.Document(nosuch): got no error; want one")
	}
}

// TestPathsAreTheRoutes: every gateway route of the service is in its document, and every path
// of the document is one of its routes or /authToken.
func TestPathsAreTheRoutes(t *testing.T) {
	t.Parallel()
	routes, err := yardstick.Routes()
	if err != nil {
		t.Fatal(err)
	}
	for service, prefix := range services {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			doc := load(t, service)
			want := []string{}
			for _, r := range routes {
				if strings.HasPrefix(r.FullMethod, prefix) || r.Path == "/authToken" {
					want = append(want, r.Method+" "+r.Path)
				}
			}
			got := []string{}
			for path, item := range doc.Paths.Map() {
				for method := range item.Operations() {
					got = append(got, method+" "+path)
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Errorf("operations:\n got %v\nwant %v", got, want)
			}
			if len(want) < 5 {
				t.Errorf("only %d routes for %s; the route list is wrong", len(want), service)
			}
		})
	}
}

func TestSecurity(t *testing.T) {
	t.Parallel()
	for service := range services {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			doc := load(t, service)
			schemes := doc.Components.SecuritySchemes
			if b := schemes["bearerAuth"]; b == nil || b.Value.Type != "http" || b.Value.Scheme != "bearer" || b.Value.BearerFormat != "JWT" {
				t.Errorf("bearerAuth: got %+v; want http bearer JWT", b)
			}
			o := schemes["oauth2"]
			if o == nil || o.Value.Type != "oauth2" || o.Value.Flows == nil || o.Value.Flows.ClientCredentials == nil {
				t.Fatalf("oauth2: got %+v; want a clientCredentials flow", o)
			}
			if got := o.Value.Flows.ClientCredentials.TokenURL; got != "/authToken" {
				t.Errorf("tokenUrl: got %q; want /authToken", got)
			}
			for path, item := range doc.Paths.Map() {
				for method, op := range item.Operations() {
					got := []string{}
					for _, req := range *op.Security {
						for name := range req {
							got = append(got, name)
						}
					}
					sort.Strings(got)
					want := []string{"bearerAuth", "oauth2"}
					if path == "/authToken" {
						want = []string{}
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s %s security: got %v; want %v", method, path, got, want)
					}
				}
			}
		})
	}
}

// TestErrorResponses: every operation documents the error body on each error status, with
// Retry-After on 429 and 503 and WWW-Authenticate on a protected path's 401.
func TestErrorResponses(t *testing.T) {
	t.Parallel()
	for service := range services {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			doc := load(t, service)
			errSchema := doc.Components.Schemas["Error"]
			if errSchema == nil {
				t.Fatal("no Error schema")
			}
			props := errSchema.Value.Properties
			for _, f := range []string{"message", "exceptionType", "additionalInfo", "validationErrors"} {
				if props[f] == nil {
					t.Errorf("Error schema lacks %s", f)
				}
			}
			if nf := props["validationErrors"].Value.Properties["nonFieldErrors"]; nf == nil {
				t.Error("validationErrors lacks nonFieldErrors")
			}
			for path, item := range doc.Paths.Map() {
				for method, op := range item.Operations() {
					for _, status := range []int{400, 401, 403, 413, 415, 429, 500, 503} {
						resp := op.Responses.Status(status)
						if resp == nil || resp.Value == nil {
							t.Errorf("%s %s: no %d response", method, path, status)
							continue
						}
						media := resp.Value.Content.Get("application/json")
						if media == nil || !refersTo(media.Schema, "#/components/schemas/Error") {
							t.Errorf("%s %s %d: body is not the Error schema", method, path, status)
						}
						_, retry := resp.Value.Headers["Retry-After"]
						if wantRetry := status == 429 || status == 503; retry != wantRetry {
							t.Errorf("%s %s %d: Retry-After documented %v; want %v", method, path, status, retry, wantRetry)
						}
						_, www := resp.Value.Headers["WWW-Authenticate"]
						if status == http.StatusUnauthorized && !www {
							t.Errorf("%s %s 401: no WWW-Authenticate header", method, path)
						}
					}
				}
			}
		})
	}
}

// refersTo reports whether a schema is ref or a oneOf holding it.
func refersTo(s *openapi3.SchemaRef, ref string) bool {
	if s == nil {
		return false
	}
	if s.Ref == ref {
		return true
	}
	for _, alt := range s.Value.OneOf {
		if alt.Ref == ref {
			return true
		}
	}
	return false
}

func TestTokenEndpoint(t *testing.T) {
	t.Parallel()
	doc := load(t, "forecast")
	op := doc.Paths.Find("/authToken").Post
	for _, mt := range []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data"} {
		if op.RequestBody.Value.Content.Get(mt) == nil {
			t.Errorf("request body lacks %s", mt)
		}
	}
	form := doc.Components.Schemas["TokenForm"].Value
	for _, f := range []string{"clientId", "clientSecret", "grant_type", "client_id", "client_secret"} {
		if form.Properties[f] == nil {
			t.Errorf("TokenForm lacks %s", f)
		}
	}
	if got := form.Properties["grant_type"].Value.Enum; !slices.Equal(got, []any{"client_credentials"}) {
		t.Errorf("grant_type enum: got %v; want [client_credentials]", got)
	}
	ok := op.Responses.Status(200).Value.Content.Get("application/json").Schema
	for _, ref := range []string{"#/components/schemas/v1IssueTokenResponse", "#/components/schemas/OAuth2Token"} {
		if !refersTo(ok, ref) {
			t.Errorf("200 lacks %s", ref)
		}
	}
	for _, status := range []int{400, 401, 403} {
		if !refersTo(op.Responses.Status(status).Value.Content.Get("application/json").Schema, "#/components/schemas/OAuth2Error") {
			t.Errorf("%d lacks OAuth2Error", status)
		}
	}
	oauth := doc.Components.Schemas["OAuth2Token"].Value
	if !slices.Equal(oauth.Required, []string{"access_token", "token_type", "expires_in"}) {
		t.Errorf("OAuth2Token required: got %v", oauth.Required)
	}
}

// TestRequiredFields pins the required lists of docs/api.md and the original API.
func TestRequiredFields(t *testing.T) {
	t.Parallel()
	cases := []struct{ service, schema, required string }{
		{"scoring", "v1IssueTokenRequest", "clientId clientSecret"},
		{"scoring", "v1ScoreItemResultsRequest", "items"},
		{"scoring", "v1ScoreItemIdsRequest", "items numberCorrect"},
		{"scoring", "v1ScoreScaleRequest", "linkId scaleScore scaleSem"},
		{"scoring", "v1ScoreItemResultsStrandsRequest", "grade timeOfYear items"},
		{"scoring", "v1ScoreDifficultiesBayesRequest", "items numberCorrect framework priorAbility priorUncertainty elapsedDays"},
		{"scoring", "v1ScoreItemResultsBayesRequest", "priorAbility priorUncertainty elapsedDays items"},
		{"scoring", "v1ScoreItemIdsBayesRequest", "items numberCorrect priorAbility priorUncertainty elapsedDays"},
		{"scoring", "v1ScoreScaleBayesRequest", "linkId scaleScore scaleSem priorAbility priorUncertainty elapsedDays"},
		{"scoring", "v1ScoreItemResultsBayesStrandsRequest", "priorAbility priorUncertainty elapsedDays grade timeOfYear items"},
		{"scoring", "v1ItemResult", "id result"},
		{"scoring", "v1ItemDifficulty", ""}, // difficulty or steps (partial credit), one of them: the server's 400
		{"scoring", "v1AdaptiveItem", "id strand maxScore"},
		{"scoring", "v1Measure", "ability abilityDisplay uncertainty framework apiVersion"},
		{"forecast", "v1ForecastRequest", "priorAbility priorUncertainty testUncertainty elapsedDays cutLevels"},
		{"forecast", "v1GroupForecastRequest", "studentData testUncertainty cutLevels"},
		{"forecast", "v1StudentData", "priorAbility priorUncertainty elapsedDays"},
		{"forecast", "v1GroupAggregate", "groupAbility groupUncertainty GroupProportionPerLevel groupStderrPerLevel"},
	}
	docs := map[string]*openapi3.T{"scoring": load(t, "scoring"), "forecast": load(t, "forecast")}
	for _, c := range cases {
		t.Run(c.schema, func(t *testing.T) {
			t.Parallel()
			s := docs[c.service].Components.Schemas[c.schema]
			if s == nil {
				t.Fatalf("no schema %s", c.schema)
			}
			got, want := slices.Sorted(slices.Values(s.Value.Required)), slices.Sorted(slices.Values(strings.Fields(c.required)))
			if !slices.Equal(got, want) {
				t.Errorf("required: got %v; want %v", got, want)
			}
		})
	}
}

// TestEnumsRangesAndShapes pins the enums, a range of each kind and both studentData shapes.
func TestEnumsRangesAndShapes(t *testing.T) {
	t.Parallel()
	scoring, forecast := load(t, "scoring"), load(t, "forecast")
	prop := func(doc *openapi3.T, schema, name string) *openapi3.Schema {
		t.Helper()
		s := doc.Components.Schemas[schema]
		if s == nil || s.Value.Properties[name] == nil {
			t.Fatalf("no property %s.%s", schema, name)
		}
		return s.Value.Properties[name].Value
	}
	framework := prop(scoring, "v1ScoreDifficultiesBayesRequest", "framework")
	if !slices.Equal(framework.Enum, []any{"lexile", "quantile"}) || !strings.Contains(framework.Description, "any case") {
		t.Errorf("framework: enum %v, description %q; want lexile, quantile and a case-insensitive note", framework.Enum, framework.Description)
	}
	if got := prop(scoring, "v1ScoreItemResultsStrandsRequest", "timeOfYear").Enum; !slices.Equal(got, []any{"BOY", "MOY", "EOY"}) {
		t.Errorf("timeOfYear enum: got %v; want [BOY MOY EOY]", got)
	}
	ranges := []struct {
		doc              *openapi3.T
		schema, name     string
		min, max         float64
		exclusiveMinimum bool
	}{
		{scoring, "v1ScoreItemResultsBayesRequest", "priorAbility", -10000, 10000, false},
		{scoring, "v1ScoreItemResultsBayesRequest", "priorUncertainty", 0, 10000, true},
		{scoring, "v1ScoreItemResultsBayesRequest", "elapsedDays", 0, 3653, false},
		{scoring, "v1ItemDifficulty", "difficulty", -10000, 10000, false},
		{scoring, "v1ScoreItemResultsStrandsRequest", "grade", 0, 12, false},
		{forecast, "v1ForecastRequest", "testUncertainty", 0, 10000, false},
		{forecast, "v1StudentData", "elapsedDays", 0, 3653, false},
	}
	for _, r := range ranges {
		p := prop(r.doc, r.schema, r.name)
		if p.Min == nil || *p.Min != r.min || p.Max == nil || *p.Max != r.max || p.ExclusiveMin.IsTrue() != r.exclusiveMinimum {
			t.Errorf("%s.%s: got [%v, %v] exclusiveMin %v; want [%v, %v] %v", r.schema, r.name, p.Min, p.Max, p.ExclusiveMin.IsTrue(), r.min, r.max, r.exclusiveMinimum)
		}
	}
	limits := []struct {
		doc          *openapi3.T
		schema, name string
		max          uint64
	}{
		{scoring, "v1ScoreItemResultsRequest", "items", 5000},
		{forecast, "v1GroupForecastRequest", "studentData", 100000},
		{forecast, "v1ForecastRequest", "cutLevels", 20},
	}
	for _, l := range limits {
		p := prop(l.doc, l.schema, l.name)
		if p.MinItems != 1 || p.MaxItems == nil || *p.MaxItems != l.max {
			t.Errorf("%s.%s: got items [%d, %v]; want [1, %d]", l.schema, l.name, p.MinItems, p.MaxItems, l.max)
		}
	}
	entry := prop(forecast, "v1GroupForecastRequest", "studentData").Items.Value
	if len(entry.OneOf) != 2 || entry.OneOf[0].Ref != "#/components/schemas/v1StudentData" {
		t.Fatalf("studentData entry: got %d shapes; want the object and the array", len(entry.OneOf))
	}
	tuple := entry.OneOf[1].Value
	if !tuple.Type.Is("array") || tuple.MinItems != 3 || tuple.MaxItems == nil || *tuple.MaxItems != 3 {
		t.Errorf("studentData array shape: got %+v; want an array of exactly 3", tuple)
	}
	// The array's numbers have the type the generator gives the object's fields.
	if got, want := tuple.Items.Value.Type, prop(forecast, "v1StudentData", "priorAbility").Type; !slices.Equal(got.Slice(), want.Slice()) {
		t.Errorf("studentData array items: got %v; want %v", got, want)
	}
}

// TestDocumentIsDeterministic: two calls give the same bytes, so clients and caches see one
// document per build.
func TestDocumentIsDeterministic(t *testing.T) {
	t.Parallel()
	a, err := openapi.Document("scoring", "v1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := openapi.Document("scoring", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Error("two calls gave different documents")
	}
	var v map[string]any
	if err := json.Unmarshal(a, &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
}
