package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/e2e/internal/live"
)

// TestWhatTheJSONFrontAccepts holds docs/api.md's "What the JSON front accepts" to the built
// services: the media types read as JSON and the ones refused, numbers sent as strings (read, and
// then held to the field's range), and no other conversion. Each case is a line of that section.
func TestWhatTheJSONFrontAccepts(t *testing.T) {
	t.Parallel()
	scoring, forecast := live.Start(t, "scoring"), live.Start(t, "forecast")
	sTok, fTok := token(t, scoring.Base), token(t, forecast.Base)

	const bayes = "/api/score/items/difficulties/bayes"
	good := `{"items":[{"difficulty":700},{"difficulty":720}],"numberCorrect":1,"framework":"lexile","priorAbility":600,"priorUncertainty":200,"elapsedDays":30}`
	cases := []struct {
		name, base, tok, path, contentType, body string
		status                                   int
		want                                     string // in the answer
	}{
		// Content-Type.
		{"json", scoring.Base, sTok, bayes, "application/json", good, 200, `"ability":575`},
		{"json with charset", scoring.Base, sTok, bayes, "application/json; charset=utf-8", good, 200, `"ability":575`},
		{"+json", scoring.Base, sTok, bayes, "application/vnd.api+json", good, 200, `"ability":575`},
		{"no Content-Type", scoring.Base, sTok, bayes, "", good, 200, `"ability":575`},
		{"curl -d's form type, JSON body", scoring.Base, sTok, bayes, "application/x-www-form-urlencoded", good, 200, `"ability":575`},
		{"a real form body", scoring.Base, sTok, bayes, "application/x-www-form-urlencoded", "items=1", 415, "UnsupportedMediaType"},
		{"text/plain", scoring.Base, sTok, bayes, "text/plain", good, 415, "UnsupportedMediaType"},
		{"multipart", scoring.Base, sTok, bayes, "multipart/form-data; boundary=x", good, 415, "UnsupportedMediaType"},
		{"xml", scoring.Base, sTok, bayes, "application/xml", good, 415, "UnsupportedMediaType"},
		{"octet-stream", scoring.Base, sTok, bayes, "application/octet-stream", good, 415, `"additionalInfo":"Send Content-Type: application/json."`},
		{"JSON to a batch path", scoring.Base, sTok, "/api/score/batch", "application/json", good, 415, `"additionalInfo":"Send Content-Type: application/x-ndjson."`},
		{"JSON to a group stream", forecast.Base, fTok, "/api/forecast/math/group/stream", "application/json", good, 415, `"additionalInfo":"Send Content-Type: application/x-ndjson."`},
		{"text to /authToken", scoring.Base, "", "/authToken", "text/plain", "clientId=demo", 415,
			`"additionalInfo":"Send Content-Type: application/json, application/x-www-form-urlencoded or multipart/form-data."`},

		// Field names: the contract's snake_case names are read as the camelCase ones; one field
		// under both names is a 400.
		{"snake_case names", scoring.Base, sTok, bayes, "application/json",
			`{"items":[{"difficulty":700},{"difficulty":720}],"number_correct":1,"framework":"lexile","prior_ability":600,"prior_uncertainty":200,"elapsed_days":30}`, 200, `"ability":575`},
		{"snake_case names on a forecast", forecast.Base, fTok, "/api/forecast/reading", "application/json",
			`{"prior_ability":640,"prior_uncertainty":70,"test_uncertainty":32.5,"elapsed_days":180,"cut_levels":[500,650,800],"grade":4,"time_of_year":"eoy"}`, 200, `"percentile":`},
		{"both names of one field", scoring.Base, sTok, bayes, "application/json",
			`{"items":[{"difficulty":700}],"numberCorrect":1,"number_correct":1,"framework":"lexile","priorAbility":600,"priorUncertainty":200,"elapsedDays":30}`, 400, `"numberCorrect":["appears more than once"]`},
		{"timeOfYear in any case", forecast.Base, fTok, "/api/forecast/reading", "application/json",
			`{"priorAbility":640,"priorUncertainty":70,"testUncertainty":32.5,"elapsedDays":180,"cutLevels":[500,650,800],"grade":4,"timeOfYear":"Eoy"}`, 200, `"percentile":`},

		// Numbers as strings: the same answer as the numbers.
		{"numbers as strings", scoring.Base, sTok, bayes, "application/json",
			`{"items":[{"difficulty":"700"},{"difficulty":"7.2e2"}],"numberCorrect":"1","framework":"lexile","priorAbility":"600","priorUncertainty":"200","elapsedDays":"30"}`, 200, `"ability":575`},
		{"a whole count as a string", scoring.Base, sTok, "/api/score/items/idsWithResults/standard", "application/json",
			`{"items":[{"id":"L000100","result":"1.0"},{"id":"L000200","result":0}]}`, 200, `"ability":`},
		{"a fractional count as a string", scoring.Base, sTok, bayes, "application/json",
			`{"items":[{"difficulty":700,"count":"2.5"}],"numberCorrect":1,"framework":"lexile","priorAbility":600,"priorUncertainty":200,"elapsedDays":30}`, 400, `items[0].count: must be a whole number, got 2.5`},
		{"strings not written as JSON numbers", scoring.Base, sTok, bayes, "application/json",
			`{"items":[{"difficulty":" 720"},{"difficulty":"+700"},{"difficulty":"700."},{"difficulty":"1_000"},{"difficulty":""}],"numberCorrect":1,"framework":"lexile","priorAbility":"0x10","priorUncertainty":200,"elapsedDays":30}`,
			400, `"items[0].difficulty: must be a number, got \" 720\"","items[1].difficulty: must be a number, got \"+700\"","items[2].difficulty: must be a number, got \"700.\"","items[3].difficulty: must be a number, got \"1_000\"","items[4].difficulty: must be a number, got \"\""],"priorAbility":["must be a number, got \"0x10\""]`},
		{"NaN and infinities are held to the range", forecast.Base, fTok, "/api/forecast/reading", "application/json",
			`{"priorAbility":"Infinity","priorUncertainty":"NaN","testUncertainty":"-Infinity","elapsedDays":10,"cutLevels":[700]}`,
			400, `"priorAbility":["must be a number between -10000 and 10000, got +Inf"],"priorUncertainty":["must be greater than 0 and at most 10000, got NaN"],"testUncertainty":["must be between 0 and 10000, got -Inf"]`},
		{"a group's object entries take strings", forecast.Base, fTok, "/api/forecast/reading/group", "application/json",
			`{"studentData":[{"priorAbility":"600","priorUncertainty":200,"elapsedDays":30}],"testUncertainty":"30","cutLevels":["700"]}`, 200, `"students":[{"ability":608.52`},
		{"a group's compact entries take numbers only", forecast.Base, fTok, "/api/forecast/reading/group", "application/json",
			`{"studentData":[["600",200,30]],"testUncertainty":30,"cutLevels":[700]}`, 400, `studentData[0]: an array entry must hold exactly 3 numbers`},

		// Nothing else is converted.
		{"a number for a string", scoring.Base, sTok, "/api/score/items/idsWithResults/standard", "application/json",
			`{"items":[{"id":100,"result":1}]}`, 400, `items[0].id: must be a string, got a number`},
		{"a string for a boolean", scoring.Base, sTok, "/api/score/items/idsWithResults/standard", "application/json",
			`{"items":[{"id":"L000100","result":1}],"fit":"true"}`, 400, `"fit":["must be true or false, got a string"]`},
		{"a boolean for a number", scoring.Base, sTok, bayes, "application/json",
			`{"items":[{"difficulty":true}],"numberCorrect":1,"framework":"lexile","priorAbility":600,"priorUncertainty":200,"elapsedDays":30}`, 400, `items[0].difficulty: must be a number, got true or false`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodPost, c.base+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.tok != "" {
				req.Header.Set("Authorization", "Bearer "+c.tok)
			}
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != c.status || !strings.Contains(string(body), c.want) {
				t.Errorf("got %d %s; want %d with %s", res.StatusCode, body, c.status, c.want)
			}
		})
	}
}

// token logs the demo client in at base's /authToken.
func token(t *testing.T, base string) string {
	t.Helper()
	res, err := http.Post(base+"/authToken", "application/json", strings.NewReader(`{"clientId":"demo","clientSecret":"demo-secret"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("authToken at %s: status %d, %v", base, res.StatusCode, err)
	}
	return tok.AccessToken
}

// TestTokenRefusalsSayWhy: each built service tells a caller why its token was refused, in the
// body and in RFC 6750's challenge, without echoing the token: the other service's token (each
// dev-mode service signs with its own key), a token cut short, and none at all (the plain
// challenge).
func TestTokenRefusalsSayWhy(t *testing.T) {
	t.Parallel()
	scoring, forecast := live.Start(t, "scoring"), live.Start(t, "forecast")
	sTok, fTok := token(t, scoring.Base), token(t, forecast.Base)
	const unreadable = "The token could not be read: it is not a token of this deployment, or it was altered or cut; send the accessToken exactly as POST /authToken gave it."
	for _, c := range []struct {
		name, base, path, tok, challenge, info string
	}{
		{"forecast's token at scoring", scoring.Base, "/api/score/items/idsWithResults/standard", fTok,
			`Bearer realm="yardstick", error="invalid_token", error_description="The token is for another service; a token works only on the service that issued it: get one from this (scoring) service's POST /authToken."`,
			"The token is for another service; a token works only on the service that issued it: get one from this (scoring) service's POST /authToken."},
		{"scoring's token at forecast", forecast.Base, "/api/forecast/reading", sTok,
			`Bearer realm="yardstick", error="invalid_token", error_description="The token is for another service; a token works only on the service that issued it: get one from this (forecast) service's POST /authToken."`,
			"The token is for another service; a token works only on the service that issued it: get one from this (forecast) service's POST /authToken."},
		{"a token cut short", scoring.Base, "/api/score/batch", sTok[:len(sTok)-4],
			`Bearer realm="yardstick", error="invalid_token", error_description="` + unreadable + `"`, unreadable},
		{"no token", forecast.Base, "/api/forecast/reading", "", `Bearer realm="yardstick"`,
			"Missing bearer token: send 'Authorization: Bearer <accessToken>' with a token from POST /authToken."},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodPost, c.base+c.path, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if c.tok != "" {
				req.Header.Set("Authorization", "Bearer "+c.tok)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			var e struct{ ExceptionType, AdditionalInfo string }
			_ = json.Unmarshal(body, &e)
			if got := res.Header.Get("WWW-Authenticate"); res.StatusCode != 401 || got != c.challenge {
				t.Errorf("got %d with WWW-Authenticate %q; want 401 with %q", res.StatusCode, got, c.challenge)
			}
			if e.ExceptionType != "NotAuthenticated" || e.AdditionalInfo != c.info {
				t.Errorf("got body %s; want NotAuthenticated saying %q", body, c.info)
			}
			if c.tok != "" && strings.Contains(string(body), c.tok[20:]) {
				t.Errorf("the body echoes the token: %s", body)
			}
		})
	}
}
