package httpfront

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/gate"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/inproc"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/reqinfo"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/pkg/token"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// gatedPath is a route of the gated front for a client with a rate: the IssueToken rpc under a
// permission (the dev client has "*"), its body limit exactly gatedBody's length.
const gatedPath = "/api/gated"

// gatedBody is a good body of gatedPath, padded to 96 bytes: a body at the limit.
var gatedBody = `{"clientId":"demo","clientSecret":"demo-secret"}` + strings.Repeat(" ", 96-48)

// gatedFront is the JSON front on a real loopback listener with the server's parts: a gate over
// a dev-mode issuer whose clients may each make one call a second (rate 1, burst 1), the
// authorizer's TokenService on the in-process channel, served at /authToken (public) and at
// gatedPath, and a chain that notes the tickets it is handed and refuses a call without one for
// its rpc, as the server's does.
type gatedFront struct {
	url, token string
	mu         sync.Mutex
	tickets    []*gate.Ticket
}

func newGatedFront(t *testing.T) *gatedFront {
	t.Helper()
	issuer, err := token.New(token.Options{Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := issuer.Authenticate(token.DevClientID, token.DevClientSecret, token.ServiceScoring, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	az := authz.New(issuer, token.ServiceScoring, slog.New(slog.DiscardHandler), nil)
	limits, err := quota.New(quota.Config{Service: "scoring", Rate: 1, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	budget := admission.New(64<<20, prometheus.NewRegistry(), "scoring")
	g := &gatedFront{token: tok.AccessToken}
	ch := inproc.New(func(ctx context.Context, tk *gate.Ticket, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		g.mu.Lock()
		g.tickets = append(g.tickets, tk)
		g.mu.Unlock()
		if tk == nil || tk.Method != info.FullMethod {
			return nil, rpcerr.NotAuthenticated("Authentication failed.", "The call was not admitted for this method.")
		}
		return h(ctx, req)
	})
	authv1.RegisterTokenServiceServer(ch, az.TokenService())
	const method = authv1.TokenService_IssueToken_FullMethodName
	table := &routes.Table{ByPath: map[string]*routes.Route{
		authTokenPath: {Method: method, Path: authTokenPath, Ruled: true, Rule: routes.Rule{Public: true}, BodyLimit: routes.AuthTokenBodyLimit},
		gatedPath:     {Method: method, Path: gatedPath, Ruled: true, Rule: routes.Rule{Permission: "score:standard"}, BodyLimit: int64(len(gatedBody))},
	}}
	f := New(Options{Routes: table, Gate: &gate.Gate{Authz: az, Limits: limits, Budget: budget},
		Channel: ch, Codec: jsonwire.New(jsonwire.Options{})})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.ServeHTTP(w, r.WithContext(reqinfo.With(r.Context(), &reqinfo.Info{}))) // as ObserveHTTP puts it
	}))
	t.Cleanup(srv.Close)
	g.url = srv.URL
	return g
}

// gatedAnswer is one answer of the gated front.
type gatedAnswer struct {
	status int
	header http.Header
	body   string
}

// do sends body with its Content-Length (or chunked, without one), and the header pairs given.
func (g *gatedFront) do(t *testing.T, method, path, body string, chunked bool, header ...string) gatedAnswer {
	t.Helper()
	var rd io.Reader = strings.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // a reader net/http cannot size: sent chunked
	}
	req, err := http.NewRequest(method, g.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return gatedAnswer{resp.StatusCode, resp.Header, string(b)}
}

// chained is how many calls the chain was handed, and whether each had its ticket.
func (g *gatedFront) chained() (calls int, allTicketed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	allTicketed = true
	for _, tk := range g.tickets {
		allTicketed = allTicketed && tk != nil && tk.Method == authv1.TokenService_IssueToken_FullMethodName
	}
	return len(g.tickets), allTicketed
}

// gatedInfo is an error body's additionalInfo.
func gatedInfo(t *testing.T, body string) string {
	t.Helper()
	var b rpcerr.ErrorBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("not an error body: %v\n%s", err, body)
	}
	return b.AdditionalInfo
}

// TestDeclaredSizeInTheGate: a body declared one byte over its route's limit is refused (413,
// stating the limit) inside the gate's one step, before the client's limits: with a rate of 1 it
// spends nothing (no RateLimit headers), so the good call after it passes and the one after that
// is refused for the rate; a body at the limit is accepted. Without a token the oversized call is
// 401, as before: the token comes first on every route. A body sent without a declared size is
// still cut at the limit as it is read.
func TestDeclaredSizeInTheGate(t *testing.T) {
	t.Parallel()
	g := newGatedFront(t)
	bearer := []string{"Authorization", "Bearer " + g.token}
	over := gatedBody + " "
	const stated = "The request body exceeds the size limit of 96 bytes."
	steps := []struct {
		name   string
		body   string
		header []string
		status int
		info   string // the 413's additionalInfo
	}{
		{"over by one byte, without a token", over, nil, http.StatusUnauthorized, ""},
		{"over by one byte", over, bearer, http.StatusRequestEntityTooLarge, stated},
		{"at the limit, after it", gatedBody, bearer, http.StatusOK, ""},
		{"at the limit again: the rate is spent", gatedBody, bearer, http.StatusTooManyRequests, ""},
	}
	for _, s := range steps { // in order: each step's rate is the one the steps before it left
		r := g.do(t, http.MethodPost, gatedPath, s.body, false, s.header...)
		if r.status != s.status {
			t.Fatalf("%s: got %d %s; want %d", s.name, r.status, r.body, s.status)
		}
		if s.info != "" && gatedInfo(t, r.body) != s.info {
			t.Errorf("%s: got %q; want %q", s.name, gatedInfo(t, r.body), s.info)
		}
		if r.status == http.StatusRequestEntityTooLarge && (r.header.Get("RateLimit-Policy") != "" || r.header.Get("RateLimit") != "") {
			t.Errorf("%s: RateLimit headers %q %q; want none: the rate was not decided", s.name, r.header.Get("RateLimit-Policy"), r.header.Get("RateLimit"))
		}
	}
	if calls, ok := g.chained(); calls != 1 || !ok {
		t.Errorf("chain handed %d calls (all with their ticket: %v); want the one accepted, with its ticket", calls, ok)
	}
	chunked := newGatedFront(t)
	if r := chunked.do(t, http.MethodPost, gatedPath, over, true, "Authorization", "Bearer "+chunked.token); r.status != http.StatusRequestEntityTooLarge || gatedInfo(t, r.body) != stated {
		t.Errorf("over by one byte, chunked: got %d %s; want 413 %q", r.status, r.body, stated)
	}
}

// TestAuthTokenGatedAndChained: POST /authToken is a call of IssueToken through the gate and the
// chain, with a ticket for that rpc; a body declared over routes.AuthTokenBodyLimit is refused
// by the gate before a byte is read (the chain never runs) with the door's own 413, not cached;
// one at the limit reaches the door and is answered; another method, a content coding, a body
// sent without a size over the limit and a SPEC body are answered as the door answers them.
func TestAuthTokenGatedAndChained(t *testing.T) {
	t.Parallel()
	creds := `{"clientId":"demo","clientSecret":"demo-secret"}`
	atLimit := creds + strings.Repeat(" ", routes.AuthTokenBodyLimit-len(creds))
	const tooLarge = "The request body exceeds the size limit of 65536 bytes (64 KiB)."
	for _, tc := range []struct {
		name, method, body string
		chunked            bool
		header             []string
		status             int
		info               string // an error's additionalInfo
		noStore            bool
		chained            int
	}{
		{"credentials", http.MethodPost, creds, false, nil, http.StatusOK, "", true, 1},
		{"at the limit", http.MethodPost, atLimit, false, nil, http.StatusOK, "", true, 1},
		{"declared one byte over the limit", http.MethodPost, atLimit + " ", false, nil, http.StatusRequestEntityTooLarge, tooLarge, true, 0},
		{"one byte over the limit, chunked", http.MethodPost, atLimit + " ", true, nil, http.StatusRequestEntityTooLarge, tooLarge, true, 0},
		{"wrong secret", http.MethodPost, `{"clientId":"demo","clientSecret":"nope"}`, false, nil, http.StatusUnauthorized,
			"The client id or client secret is incorrect.", true, 1},
		{"GET", http.MethodGet, "", false, nil, http.StatusMethodNotAllowed, "", false, 0},
		{"gzip", http.MethodPost, creds, false, []string{"Content-Encoding", "gzip"}, http.StatusUnsupportedMediaType,
			"Send the body without Content-Encoding: it is read as sent.", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGatedFront(t)
			r := g.do(t, tc.method, authTokenPath, tc.body, tc.chunked, tc.header...)
			if r.status != tc.status {
				t.Fatalf("got %d %s; want %d", r.status, r.body, tc.status)
			}
			if tc.status == http.StatusOK && !strings.HasPrefix(r.body, `{"accessToken":"`) {
				t.Errorf("got %s; want the token in the original API's shape", r.body)
			}
			if tc.info != "" && gatedInfo(t, r.body) != tc.info {
				t.Errorf("additionalInfo: got %q; want %q", gatedInfo(t, r.body), tc.info)
			}
			if noStore := r.header.Get("Cache-Control") == "no-store" && r.header.Get("Pragma") == "no-cache"; noStore != tc.noStore {
				t.Errorf("Cache-Control %q, Pragma %q: got no-store %v; want %v", r.header.Get("Cache-Control"), r.header.Get("Pragma"), noStore, tc.noStore)
			}
			if calls, ok := g.chained(); calls != tc.chained || !ok {
				t.Errorf("chain handed %d calls (all with an IssueToken ticket: %v); want %d", calls, ok, tc.chained)
			}
		})
	}
	t.Run("declared over the limit, answered before the body is sent", func(t *testing.T) {
		t.Parallel()
		g := newGatedFront(t)
		conn, err := net.Dial("tcp", strings.TrimPrefix(g.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// The headers and one byte of the body; the rest never comes: a door that read the body
		// first would wait for it past the deadline.
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", authTokenPath, routes.AuthTokenBodyLimit+1)
		if _, err := conn.Write([]byte(head)); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer before the body: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || gatedInfo(t, string(b)) != tooLarge || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("got %d %s, Cache-Control %q; want 413 %q, no-store", resp.StatusCode, b, resp.Header.Get("Cache-Control"), tooLarge)
		}
	})
}
