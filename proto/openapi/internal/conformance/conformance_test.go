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

// streamPaths are the NDJSON paths of each service: the gateway has no route for a stream, and
// the documents describe them from the overlay.
var streamPaths = map[string][]string{
	"scoring":  {"/api/score/batch"},
	"forecast": {"/api/forecast/batch", "/api/forecast/reading/group/stream", "/api/forecast/math/group/stream"},
}

// TestPathsAreTheRoutes: every gateway route of the service and every NDJSON stream is in its
// document, and every path of the document is one of them or /authToken.
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
			for _, p := range streamPaths[service] {
				want = append(want, "POST "+p)
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
					// Every scope an operation needs is a scope of the flow, with a description.
					for _, req := range *op.Security {
						for _, scope := range req["oauth2"] {
							if o.Value.Flows.ClientCredentials.Scopes[scope] == "" {
								t.Errorf("%s %s needs scope %q, which the oauth2 flow does not describe", method, path, scope)
							}
						}
					}
				}
			}
			if o.Value.Flows.ClientCredentials.Scopes["*"] == "" {
				t.Errorf("the oauth2 flow has no scope \"*\" (every permission)")
			}
		})
	}
}

// TestScopes: each operation's OAuth2 requirement is the permissions the contract's method
// options give its rpc (the group streams both of theirs), bearerAuth none; each document's flow
// lists its own service's permissions and "*", and no other service's.
func TestScopes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ service, path, want string }{
		{"scoring", "/api/score/items/idsWithResults/standard", "score:standard"},
		{"scoring", "/api/score/form/id/standard", "score:standard"},
		{"scoring", "/api/score/items/difficulties/bayes", "score:bayes"},
		{"scoring", "/api/score/scale/bayes", "score:scale"},
		{"scoring", "/api/score/items/idsWithResults/bayes/strands", "score:strands"},
		{"scoring", "/api/score/adaptive/next", "score:adaptive"},
		{"scoring", "/api/score/batch", "score:batch"},
		{"forecast", "/api/forecast/reading", "forecast:reading"},
		{"forecast", "/api/forecast/comprehension", "forecast:reading"},
		{"forecast", "/api/forecast/math/group", "forecast:group"},
		{"forecast", "/api/forecast/batch", "forecast:batch"},
		{"forecast", "/api/forecast/reading/group/stream", "forecast:batch forecast:group"},
		{"forecast", "/api/forecast/math/group/stream", "forecast:batch forecast:group"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			op := load(t, tc.service).Paths.Find(tc.path).Post
			got := map[string]string{}
			for _, req := range *op.Security {
				for name, scopes := range req {
					got[name] = strings.Join(scopes, " ")
				}
			}
			if got["oauth2"] != tc.want || got["bearerAuth"] != "" || len(got) != 2 {
				t.Errorf("security: got %v; want oauth2 [%s] and bearerAuth []", got, tc.want)
			}
		})
	}
	// The content catalog (content:read) is served by the scoring service.
	for service, prefixes := range map[string][]string{"scoring": {"score:", "content:"}, "forecast": {"forecast:"}} {
		scopes := load(t, service).Components.SecuritySchemes["oauth2"].Value.Flows.ClientCredentials.Scopes
		for scope := range scopes {
			if scope != "*" && !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(scope, p) }) {
				t.Errorf("%s: scope %q is another service's", service, scope)
			}
		}
		if len(scopes) < 4 {
			t.Errorf("%s: got scopes %v; want its permissions and *", service, scopes)
		}
	}
}

// TestServersAndStreams: the relative server first (Swagger UI calls the service that served
// the page), then make run's address and a deployment's; each NDJSON path takes and answers
// application/x-ndjson with its line schemas as components.
func TestServersAndStreams(t *testing.T) {
	t.Parallel()
	for service, port := range map[string]string{"scoring": "8080", "forecast": "8081"} {
		doc := load(t, service)
		var urls []string
		for _, s := range doc.Servers {
			urls = append(urls, s.URL)
		}
		if want := []string{"/", "http://127.0.0.1:" + port, "https://{host}"}; !slices.Equal(urls, want) {
			t.Errorf("%s servers: got %v; want %v", service, urls, want)
		}
		for _, p := range streamPaths[service] {
			op := doc.Paths.Find(p).Post
			in := op.RequestBody.Value.Content.Get("application/x-ndjson")
			out := op.Responses.Status(200).Value.Content.Get("application/x-ndjson")
			if in == nil || out == nil || len(op.RequestBody.Value.Content) != 1 {
				t.Errorf("%s: got request %v, answer %v; want application/x-ndjson both ways, only", p, op.RequestBody.Value.Content, op.Responses.Status(200).Value.Content)
				continue
			}
			for _, s := range append(in.Schema.Value.OneOf, out.Schema.Value.OneOf...) {
				if s.Ref == "" {
					t.Errorf("%s: a line schema is written in place; want a component", p)
				}
			}
		}
	}
	batch := load(t, "scoring").Components.Schemas["BatchRecord"]
	if batch == nil || !slices.Equal(batch.Value.Required, []string{"id", "path", "body"}) {
		t.Errorf("BatchRecord: got %v; want a component requiring id, path and body", batch)
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
	for _, ref := range []string{"#/components/schemas/IssueTokenResponse", "#/components/schemas/OAuth2Token"} {
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
		{"scoring", "IssueTokenRequest", "clientId clientSecret"},
		{"scoring", "ScoreItemResultsRequest", "items"},
		{"scoring", "ScoreItemIdsRequest", "items numberCorrect"},
		{"scoring", "ScoreScaleRequest", "linkId scaleScore scaleSem"},
		{"scoring", "ScoreItemResultsStrandsRequest", "grade timeOfYear items"},
		{"scoring", "ScoreDifficultiesBayesRequest", "items numberCorrect framework priorAbility priorUncertainty elapsedDays"},
		{"scoring", "ScoreItemResultsBayesRequest", "priorAbility priorUncertainty elapsedDays items"},
		{"scoring", "ScoreItemIdsBayesRequest", "items numberCorrect priorAbility priorUncertainty elapsedDays"},
		{"scoring", "ScoreScaleBayesRequest", "linkId scaleScore scaleSem priorAbility priorUncertainty elapsedDays"},
		{"scoring", "ScoreItemResultsBayesStrandsRequest", "priorAbility priorUncertainty elapsedDays grade timeOfYear items"},
		{"scoring", "ItemResult", "id result"},
		{"scoring", "ItemDifficulty", ""}, // difficulty or steps (partial credit), one of them: the server's 400
		{"scoring", "AdaptiveItem", "id strand maxScore"},
		{"scoring", "Measure", "ability abilityDisplay uncertainty framework apiVersion"},
		{"forecast", "ForecastRequest", "priorAbility priorUncertainty testUncertainty elapsedDays cutLevels"},
		{"forecast", "GroupForecastRequest", "studentData testUncertainty cutLevels"},
		{"forecast", "StudentData", "priorAbility priorUncertainty elapsedDays"},
		{"forecast", "GroupAggregate", "groupAbility groupUncertainty GroupProportionPerLevel groupStderrPerLevel"},
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
	// A framework is any of the bundle in force (docs/content.md): no enum, the demo's named.
	framework := prop(scoring, "ScoreDifficultiesBayesRequest", "framework")
	if len(framework.Enum) != 0 || !strings.Contains(framework.Description, "any case") || !strings.Contains(framework.Description, "the demonstration bundle: lexile, quantile") {
		t.Errorf("framework: enum %v, description %q; want no enum, the bundle's frameworks and a case-insensitive note", framework.Enum, framework.Description)
	}
	if got := prop(scoring, "ScoreItemResultsStrandsRequest", "timeOfYear").Enum; !slices.Equal(got, []any{"BOY", "MOY", "EOY"}) {
		t.Errorf("timeOfYear enum: got %v; want [BOY MOY EOY]", got)
	}
	ranges := []struct {
		doc              *openapi3.T
		schema, name     string
		min, max         float64
		exclusiveMinimum bool
	}{
		{scoring, "ScoreItemResultsBayesRequest", "priorAbility", -10000, 10000, false},
		{scoring, "ScoreItemResultsBayesRequest", "priorUncertainty", 0, 10000, true},
		{scoring, "ScoreItemResultsBayesRequest", "elapsedDays", 0, 3653, false},
		{scoring, "ItemDifficulty", "difficulty", -10000, 10000, false},
		{scoring, "ScoreItemResultsStrandsRequest", "grade", 0, 12, false},
		{forecast, "ForecastRequest", "testUncertainty", 0, 10000, false},
		{forecast, "StudentData", "elapsedDays", 0, 3653, false},
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
		{scoring, "ScoreItemResultsRequest", "items", 5000},
		{forecast, "GroupForecastRequest", "studentData", 100000},
		{forecast, "ForecastRequest", "cutLevels", 20},
	}
	for _, l := range limits {
		p := prop(l.doc, l.schema, l.name)
		if p.MinItems != 1 || p.MaxItems == nil || *p.MaxItems != l.max {
			t.Errorf("%s.%s: got items [%d, %v]; want [1, %d]", l.schema, l.name, p.MinItems, p.MaxItems, l.max)
		}
	}
	entry := prop(forecast, "GroupForecastRequest", "studentData").Items.Value
	if len(entry.OneOf) != 2 || entry.OneOf[0].Ref != "#/components/schemas/StudentData" {
		t.Fatalf("studentData entry: got %d shapes; want the object and the array", len(entry.OneOf))
	}
	tuple := entry.OneOf[1].Value
	if !tuple.Type.Is("array") || tuple.MinItems != 3 || tuple.MaxItems == nil || *tuple.MaxItems != 3 {
		t.Errorf("studentData array shape: got %+v; want an array of exactly 3", tuple)
	}
	// The array's numbers have the type the generator gives the object's fields.
	if got, want := tuple.Items.Value.Type, prop(forecast, "StudentData", "priorAbility").Type; !slices.Equal(got.Slice(), want.Slice()) {
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
