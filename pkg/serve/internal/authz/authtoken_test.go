package authz

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/internal/calltest"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	"github.com/yardstick-dev/yardstick/pkg/token/tokentest"
)

// loginServer is POST /authToken of a scoring service's authorizer on a real loopback listener,
// the way the HTTP front serves it: an issuer in dev mode (the demo client, "*" on both
// services) over the clients file given. Beside it, GET /whoami is a protected endpoint
// (score:standard) that answers {"client": <the token's client>}.
type loginServer struct {
	t    *testing.T
	a    *Authorizer
	base string
}

func newLoginServer(t *testing.T, clients string) *loginServer {
	t.Helper()
	issuer, err := token.New(token.Options{ClientsFile: clients, Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	a := New(issuer, token.ServiceScoring, slog.New(slog.DiscardHandler), nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/authToken", a.ServeAuthToken)
	mux.HandleFunc("GET /whoami", func(w http.ResponseWriter, r *http.Request) {
		ctx, err := a.Authorize(r.Context(), whoami, Bearer(r.Header.Values("Authorization")))
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"client": ClientID(ctx)})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &loginServer{t: t, a: a, base: srv.URL}
}

// whoami is the route of the login server's protected endpoint.
var whoami = &routes.Route{Method: "/test.v1.Test/WhoAmI", Ruled: true, Rule: routes.Rule{Permission: "score:standard"}}

// response is one answer of the login server.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (h *loginServer) do(method, path, contentType, body string, header ...string) response {
	h.t.Helper()
	r := calltest.Do(h.t, method, h.base+path, contentType, body, header...)
	return response{status: r.Status, header: r.Header, body: r.Body}
}

func (h *loginServer) post(path, body string) response {
	h.t.Helper()
	return h.do(http.MethodPost, path, "application/json", body)
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	return calltest.Response{Body: r.body}.Object(t)
}

// compactToken is the token answer byte for byte.
var compactToken = regexp.MustCompile(`^\{"accessToken":"[A-Za-z0-9_.-]+","expiresIn":86400\}$`)

// errorBody is r's documented error body, every key a string.
func errorBody(t *testing.T, r response) rpcerr.ErrorBody {
	t.Helper()
	var b rpcerr.ErrorBody
	m := r.json(t)
	for _, k := range []string{"message", "exceptionType", "additionalInfo"} {
		if _, ok := m[k].(string); !ok {
			t.Fatalf("error body lacks string %q: %s", k, r.body)
		}
	}
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFastClients writes a clients file with one forecast-only client whose secret is a
// generated one (fast hash), so that tests of answers, unlike the busy test, never queue for an
// argon2 slot. It returns the path and the secret.
func writeFastClients(t *testing.T) (path, secret string) {
	t.Helper()
	c := tokentest.Generated(t, "forecaster", []string{token.ServiceForecast}, "*")
	return tokentest.WriteClients(t, t.TempDir(), c), c.Secret
}

// slowSecret is the secret of the client "slow", hashed with argon2id at its default cost.
const slowSecret = "a-secret-of-the-slow-client"

// writeSlowClients writes a clients file of one scoring client, "slow", whose secret hash is
// argon2id at the default cost: each check takes 0.1 s or more, and holds a hashing slot.
func writeSlowClients(t *testing.T) string {
	t.Helper()
	return tokentest.WriteClients(t, t.TempDir(), tokentest.Client{ID: "slow", Secret: slowSecret, Services: []string{token.ServiceScoring}, Permissions: []string{"*"}})
}

// multipartBody encodes fields (name, value pairs) as multipart/form-data.
func multipartBody(t *testing.T, fields ...string) (contentType, body string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := mw.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), b.String()
}

// Kinds of answer a /authToken case expects.
const (
	specToken  = "SPEC token"  // 200 {"accessToken","expiresIn"}
	oauthToken = "OAuth token" // 200 {"access_token","token_type","expires_in"}
	oauthError = "OAuth error" // {"error","error_description"}
	specError  = "SPEC error"  // the error body
	formCT     = "application/x-www-form-urlencoded"
	jsonCT     = "application/json"
	demoJSON   = `{"clientId":"demo","clientSecret":"demo-secret"}`
	demoForm   = `clientId=demo&clientSecret=demo-secret`
	oauthForm  = `grant_type=client_credentials&client_id=demo&client_secret=demo-secret`
	grantOnly  = `grant_type=client_credentials`
	authHeader = "Authorization"
)

func TestAuthTokenShapes(t *testing.T) {
	t.Parallel()
	clients, forecasterSecret := writeFastClients(t)
	h := newLoginServer(t, clients)
	mpCT, mpBody := multipartBody(t, "clientId", "demo", "clientSecret", "demo-secret")
	mpOAuthCT, mpOAuthBody := multipartBody(t, "grant_type", "client_credentials", "client_id", "demo", "client_secret", "demo-secret")
	mpRepeatCT, mpRepeatBody := multipartBody(t, "clientId", "demo", "clientId", "demo", "clientSecret", "demo-secret")

	cases := []authTokenCase{
		// SPEC-style: every body shape and alias.
		{"json", "", jsonCT, demoJSON, nil, 200, specToken, "", nil, false},
		{"json clientID alias", "", jsonCT, `{"clientID":"demo","clientSecret":"demo-secret"}`, nil, 200, specToken, "", nil, false},
		{"json OAuth names without grant_type", "", jsonCT, `{"client_id":"demo","client_secret":"demo-secret"}`, nil, 200, specToken, "", nil, false},
		{"json +json media type", "", "application/vnd.api+json", demoJSON, nil, 200, specToken, "", nil, false},
		{"form", "", formCT, demoForm, nil, 200, specToken, "", nil, false},
		{"form clientID alias", "", formCT, `clientID=demo&clientSecret=demo-secret`, nil, 200, specToken, "", nil, false},
		{"multipart", "", mpCT, mpBody, nil, 200, specToken, "", nil, false},
		{"JSON labelled form-encoded (curl -d)", "", formCT, demoJSON, nil, 200, specToken, "", nil, false},
		{"no content type, JSON", "", "", demoJSON, nil, 200, specToken, "", nil, false},
		{"no content type, form", "", "", demoForm, nil, 200, specToken, "", nil, false},
		{"HTTP Basic, no body", "", "", "", []string{authHeader, basic("demo", "demo-secret")}, 200, specToken, "", nil, false},
		{"Bearer header is ignored", "", jsonCT, demoJSON, []string{authHeader, "Bearer x"}, 200, specToken, "", nil, false},
		{"wrong secret", "", jsonCT, `{"clientId":"demo","clientSecret":"nope"}`, nil, 401, specError, rpcerr.ExceptionNotAuthenticated, nil, false},
		{"unknown client", "", jsonCT, `{"clientId":"ghost","clientSecret":"nope"}`, nil, 401, specError, rpcerr.ExceptionNotAuthenticated, nil, false},
		{"missing both", "", jsonCT, `{}`, nil, 401, specError, rpcerr.ExceptionNotAuthenticated, nil, false},
		{"missing secret", "", jsonCT, `{"clientId":"demo"}`, nil, 401, specError, rpcerr.ExceptionNotAuthenticated, nil, false},
		{"empty strings", "", jsonCT, `{"clientId":"","clientSecret":""}`, nil, 401, specError, rpcerr.ExceptionNotAuthenticated, nil, false},
		{"null secret", "", jsonCT, `{"clientId":"demo","clientSecret":null}`, nil, 401, specError, rpcerr.ExceptionNotAuthenticated, nil, false},
		{"missing in a form", "", formCT, `clientId=demo`, nil, 401, specError, rpcerr.ExceptionNotAuthenticated, nil, false},
		{"empty body", "", jsonCT, ``, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"nonFieldErrors": {"request body must be a JSON object"}}, false},
		{"wrong Basic secret", "", "", "", []string{authHeader, basic("demo", "nope")}, 401, specError, rpcerr.ExceptionNotAuthenticated, nil, true},
		{"Basic not base64", "", "", "", []string{authHeader, "Basic !!!"}, 401, specError, rpcerr.ExceptionNotAuthenticated, nil, true},
		{"client without this service", "", jsonCT, `{"clientId":"forecaster","clientSecret":"` + forecasterSecret + `"}`, nil, 403, specError, rpcerr.ExceptionPermissionDenied, nil, false},
		{"misspelt field", "", jsonCT, `{"clientId":"demo","clientSecert":"demo-secret"}`, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"clientSecert": {`unknown field "clientSecert"; did you mean "clientSecret"?`}}, false},
		{"unknown field", "", jsonCT, `{"clientId":"demo","clientSecret":"demo-secret","colour":"red"}`, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"colour": {`unknown field "colour"; the fields are clientId and clientSecret`}}, false},
		{"unknown form field", "", formCT, demoForm + "&submit=go", nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"submit": {`unknown field "submit"; the fields are clientId and clientSecret`}}, false},
		{"duplicate key", "", jsonCT, `{"clientId":"demo","clientId":"demo","clientSecret":"demo-secret"}`, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"clientId": {`duplicate key "clientId"`}}, false},
		{"both spellings", "", jsonCT, `{"clientId":"demo","clientID":"demo","clientSecret":"demo-secret"}`, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"clientId": {"clientId is given twice (under two names)"}}, false},
		{"repeated form field", "", mpRepeatCT, mpRepeatBody, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"clientId": {"clientId is given more than once"}}, false},
		{"trailing data", "", jsonCT, demoJSON + ` {}`, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"nonFieldErrors": {"request body has data after the JSON object"}}, false},
		{"number for clientId", "", jsonCT, `{"clientId":7,"clientSecret":"demo-secret"}`, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"clientId": {"clientId must be a string"}}, false},
		{"malformed JSON", "", jsonCT, `{"clientId":`, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"nonFieldErrors": {"request body is not valid JSON"}}, false},
		{"JSON array", "", jsonCT, `[]`, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"nonFieldErrors": {"request body must be a JSON object"}}, false},
		{"Basic and body credentials", "", jsonCT, demoJSON, []string{authHeader, basic("demo", "demo-secret")}, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"nonFieldErrors": {"credentials are given both in the Authorization header and in the body; use one"}}, false},
		{"multipart without boundary", "", "multipart/form-data", mpBody, nil, 400, specError, rpcerr.ExceptionValidation,
			map[string][]string{"nonFieldErrors": {"multipart body could not be parsed: no boundary"}}, false},
		{"text body", "", "text/plain", demoForm, nil, 415, specError, rpcerr.ExceptionUnsupportedType, nil, false},
		{"too large", "", jsonCT, `{"clientId":"` + strings.Repeat("x", routes.AuthTokenBodyLimit) + `"}`, nil, 413, specError, rpcerr.ExceptionTooLarge, nil, false},
		{"GET", http.MethodGet, "", "", nil, 405, specError, rpcerr.ExceptionMethodNotAllowed, nil, false},

		// OAuth 2.0 client credentials (RFC 6749 §4.4, §5.1, §5.2).
		{"oauth form", "", formCT, oauthForm, nil, 200, oauthToken, "", nil, false},
		{"oauth Basic", "", formCT, grantOnly, []string{authHeader, basic("demo", "demo-secret")}, 200, oauthToken, "", nil, false},
		{"oauth multipart", "", mpOAuthCT, mpOAuthBody, nil, 200, oauthToken, "", nil, false},
		{"oauth with SPEC names", "", formCT, grantOnly + "&" + demoForm, nil, 200, oauthToken, "", nil, false},
		{"oauth unknown parameter ignored", "", formCT, oauthForm + "&audience=x", nil, 200, oauthToken, "", nil, false},
		{"oauth unsupported grant", "", formCT, `grant_type=password&username=demo&password=demo-secret`, nil, 400, oauthError, "unsupported_grant_type", nil, false},
		{"oauth no credentials", "", formCT, grantOnly, nil, 400, oauthError, "invalid_client", nil, false},
		{"oauth wrong secret in the form", "", formCT, grantOnly + "&client_id=demo&client_secret=nope", nil, 400, oauthError, "invalid_client", nil, false},
		{"oauth wrong secret in Basic", "", formCT, grantOnly, []string{authHeader, basic("demo", "nope")}, 401, oauthError, "invalid_client", nil, true},
		{"oauth Basic without colon", "", formCT, grantOnly, []string{authHeader, "Basic " + base64.StdEncoding.EncodeToString([]byte("demo"))}, 401, oauthError, "invalid_client", nil, true},
		{"oauth repeated parameter", "", formCT, oauthForm + "&client_id=demo", nil, 400, oauthError, "invalid_request", nil, false},
		{"oauth Basic and form credentials", "", formCT, oauthForm, []string{authHeader, basic("demo", "demo-secret")}, 400, oauthError, "invalid_request", nil, false},
		{"oauth client without this service", "", formCT, grantOnly + "&client_id=forecaster&client_secret=" + forecasterSecret, nil, 400, oauthError, "unauthorized_client", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			r := h.do(method, "/authToken", tc.contentType, tc.body, tc.header...)
			if r.status != tc.status {
				t.Fatalf("got %d %s; want %d", r.status, r.body, tc.status)
			}
			checkAuthTokenAnswer(t, tc, r)
		})
	}
	t.Run("oauth scope asked is answered", func(t *testing.T) {
		t.Parallel()
		r := h.do(http.MethodPost, "/authToken", formCT, oauthForm+"&scope=score:standard")
		if got := r.json(t)["scope"]; r.status != 200 || got != "*" {
			t.Errorf("got %d, scope %v; want 200 and the scope granted, \"*\"", r.status, got)
		}
	})
	t.Run("415 and 413 say what /authToken takes", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ name, ctype, body, info string }{
			{"text", "text/plain", demoForm, "Send Content-Type: application/json, application/x-www-form-urlencoded or multipart/form-data."},
			{"unparsable type", "a/b;;", demoForm, "Send Content-Type: application/json, application/x-www-form-urlencoded or multipart/form-data."},
			{"64 KiB + 1", jsonCT, `{"clientId":"` + strings.Repeat("x", routes.AuthTokenBodyLimit) + `"}`, "The request body exceeds the size limit of 65536 bytes (64 KiB)."},
		} {
			if b := errorBody(t, h.do(http.MethodPost, "/authToken", tc.ctype, tc.body)); b.AdditionalInfo != tc.info {
				t.Errorf("%s: got %q; want %q", tc.name, b.AdditionalInfo, tc.info)
			}
		}
	})
	t.Run("missing credentials say what is missing", func(t *testing.T) {
		t.Parallel()
		if b := errorBody(t, h.post("/authToken", `{}`)); b.AdditionalInfo != "clientId and clientSecret are both required." {
			t.Errorf("got %q; want the required fields named", b.AdditionalInfo)
		}
	})
}

// authTokenCase is one /authToken request and what its answer must be.
type authTokenCase struct {
	name, method, contentType, body string
	header                          []string
	status                          int
	kind                            string
	want                            string // exceptionType or OAuth error code
	validation                      map[string][]string
	challenge                       bool // WWW-Authenticate: Basic expected
}

// checkAuthTokenAnswer holds the answer r to the case tc's headers and body shape.
func checkAuthTokenAnswer(t *testing.T, tc authTokenCase, r response) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q; want application/json", ct)
	}
	// A Basic challenge exactly when Basic was used (a SPEC-style 401 without it carries the
	// front's Bearer challenge, and OAuth's 400s none).
	if got := r.header.Get("WWW-Authenticate"); strings.HasPrefix(got, "Basic ") != tc.challenge || tc.kind == oauthError && !tc.challenge && got != "" {
		t.Errorf("WWW-Authenticate: got %q; want a Basic challenge: %v", got, tc.challenge)
	}
	if tc.method == "" && r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control: got %q; want no-store", r.header.Get("Cache-Control"))
	}
	m := r.json(t)
	switch tc.kind {
	case specToken:
		if !compactToken.Match(r.body) {
			t.Errorf("got %s; want exactly {\"accessToken\":\"<JWT>\",\"expiresIn\":86400}", r.body)
		}
	case oauthToken:
		if len(m) != 3 || m["token_type"] != "Bearer" || m["expires_in"] != 86400.0 || strings.Count(m["access_token"].(string), ".") != 2 {
			t.Errorf("got %s; want exactly access_token (a JWT), token_type Bearer, expires_in 86400", r.body)
		}
	case oauthError:
		if len(m) != 2 || m["error"] != tc.want || m["error_description"] == "" {
			t.Errorf("got %s; want error %q with an error_description", r.body, tc.want)
		}
	case specError:
		b := errorBody(t, r)
		if b.ExceptionType != tc.want {
			t.Errorf("exceptionType: got %q; want %q", b.ExceptionType, tc.want)
		}
		if tc.validation != nil && !reflect.DeepEqual(b.ValidationErrors, tc.validation) {
			t.Errorf("validationErrors: got %v; want %v", b.ValidationErrors, tc.validation)
		}
		if tc.status == 401 && !strings.Contains(strings.ToLower(b.Message), "authentication failed") {
			t.Errorf("message: got %q; want it to state that authentication failed", b.Message)
		}
	}
}
