package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/proto/prototest"
	"github.com/yardstick-dev/yardstick/proto/yardstick"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// fuzzRoutes are the paths the fuzz target posts to: every route of the contract (http.yaml),
// the token endpoint among them, and a path that does not exist.
var fuzzRoutes = func() []string {
	contract, err := yardstick.Routes()
	if err != nil {
		panic(err)
	}
	var paths []string
	for _, r := range contract {
		paths = append(paths, r.Path)
	}
	return append(paths, "/api/nothing/here")
}()

// documentedStatus are the statuses docs/api.md lists for the API.
var documentedStatus = map[int]bool{200: true, 400: true, 401: true, 403: true, 404: true, 405: true, 413: true, 415: true, 429: true, 503: true}

// exampleSeeds are the request bodies of docs/examples.md, by route: the pasted curl commands'
// paths and -d bodies.
func exampleSeeds(t testing.TB) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/examples.md")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`(?s)curl -s -X POST "\$(?:SCORING|FORECAST)(/[^"]*)".*?-d '([^']*)'`)
	out := map[string][]string{}
	for _, m := range call.FindAllStringSubmatch(string(doc), -1) {
		out[m[1]] = append(out[m[1]], m[2])
	}
	return out
}

// answerAll is a service that answers every unary rpc of the contract's service name with an
// empty response, whatever rpcs the contract has: the fuzz target is after the front (routing,
// auth, media types, limits, decoding, errors), which runs for real. Its streams are stubs.
var answerAll = prototest.AnswerAll

// contractService is the contract's service of that name (scoring, forecast) with answerAll's
// handlers, its generated gateway, its wire rules and its limits (their defaults).
func contractService(t testing.TB, name string) Service {
	t.Helper()
	desc, gateway, wire, methods := scoringv1.ScoringService_ServiceDesc.ServiceName, scoringGateway, scoringWire, map[string]MethodLimits(nil)
	if name == "forecast" {
		desc, gateway, wire, methods = forecastv1.ForecastService_ServiceDesc.ServiceName, forecastGateway, forecastWire, fakeDefaults.forecastMethods()
	}
	return Service{
		Register: func(g grpc.ServiceRegistrar) {
			g.RegisterService(answerAll(t, desc), struct{}{})
		},
		Gateway: gateway,
		Wire:    fakeDefaults.wire(wire),
		Methods: methods,
	}
}

// forecastGateway registers the forecast contract's JSON routes on a client of the in-process
// channel, as the forecast service does.
func forecastGateway(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
	return forecastv1.RegisterForecastServiceHandlerClient(ctx, mux, forecastv1.NewForecastServiceClient(conn))
}

// fuzzServer is a server of service built in-process (no listeners) with its demo-client token.
func fuzzServer(t testing.TB, service string, svc func(Config) Service) (http.Handler, string) {
	t.Helper()
	cfg, err := LoadConfig(identityOf(service), nil, []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=127.0.0.1:0", "YARDSTICK_GRPC_ADDR=127.0.0.1:0", "YARDSTICK_RELOAD_INTERVAL=0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler), svc(cfg))
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/authToken", strings.NewReader(`{"clientId":"demo","clientSecret":"demo-secret"}`)))
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %d %s", w.Code, w.Body)
	}
	return h, tok.AccessToken
}

// FuzzFront sends any body to any route of either service, with a valid, missing or garbage
// token, any of four media types and POST or GET: every answer has a documented status (never
// 500, never a panic) and a JSON body. Seeded with the request bodies of docs/examples.md.
//
//	go test -run '^$' -fuzz FuzzFront -fuzztime 60s ./pkg/serve/
func FuzzFront(f *testing.F) {
	scoring, scoringTok := fuzzServer(f, "scoring", func(Config) Service { return contractService(f, "scoring") })
	forecast, forecastTok := fuzzServer(f, "forecast", func(Config) Service { return contractService(f, "forecast") })

	seeds := exampleSeeds(f)
	for _, path := range fuzzRoutes[:len(fuzzRoutes)-1] { // the last is the path that does not exist
		if len(seeds[path]) == 0 {
			f.Errorf("http.yaml routes %s, for which docs/examples.md has no example (scripts/examples.list)", path)
		}
	}
	for path, bodies := range seeds {
		if strings.HasSuffix(path, "/batch") || strings.HasSuffix(path, "/stream") {
			continue // NDJSON streams need a connection: batch_test.go and internal/batch test them
		}
		route := -1
		for i, r := range fuzzRoutes {
			if r == path {
				route = i
			}
		}
		if route < 0 {
			f.Fatalf("docs/examples.md posts to %s, which the fuzz target does not know", path)
		}
		for _, b := range bodies {
			f.Add(uint8(route), uint8(0), []byte(b))
		}
	}
	f.Add(uint8(0), uint8(1), []byte("clientId=demo&clientSecret=demo-secret")) // the form login

	f.Fuzz(func(t *testing.T, route, mode uint8, body []byte) {
		path := fuzzRoutes[int(route)%len(fuzzRoutes)]
		h, tok := scoring, scoringTok
		if strings.HasPrefix(path, "/api/forecast") || route&0x80 != 0 {
			h, tok = forecast, forecastTok
		}
		method := http.MethodPost
		if mode&0x40 != 0 {
			method = http.MethodGet
		}
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		switch mode & 3 {
		case 0:
			req.Header.Set("Content-Type", "application/json")
		case 1:
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		case 2:
			req.Header.Set("Content-Type", "text/plain")
		}
		switch (mode >> 2) & 3 {
		case 0, 1:
			req.Header.Set("Authorization", "Bearer "+tok)
		case 2:
			req.Header.Set("Authorization", "Bearer "+string(body[:min(len(body), 40)]))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if !documentedStatus[w.Code] {
			t.Fatalf("%s %s: got %d %s; want a documented status", method, path, w.Code, w.Body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s %s: got %d with a body that is not JSON: %q", method, path, w.Code, w.Body)
		}
	})
}
