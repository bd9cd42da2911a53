package scoring

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/token"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// TestPageTokensAuthenticated: a page token is taken only for the query it was written for: a
// forged one (base64url of "after:" and an id, the old format), an altered one, and one written
// for another framework, strand or list of ids are each a 400 naming pageToken; the same query
// with another page size takes it.
func TestPageTokensAuthenticated(t *testing.T) {
	t.Parallel()
	s := start(t)
	strand := mustStrand(t, "lexile")
	first := postJSON[catalogItemsBody](t, s, "/api/content/items", `{"framework":"lexile","pageSize":20}`)
	tok := first.NextPageToken
	ofStrand := postJSON[catalogItemsBody](t, s, "/api/content/items", `{"framework":"lexile","pageSize":2,"strand":"`+strand+`"}`).NextPageToken
	ids := `["L000001","L000002","L000003"]`
	ofIDs := postJSON[catalogItemsBody](t, s, "/api/content/items", `{"framework":"lexile","pageSize":1,"ids":`+ids+`}`).NextPageToken
	if tok == "" || ofStrand == "" || ofIDs == "" {
		t.Fatalf("tokens %q %q %q; want three", tok, ofStrand, ofIDs)
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	altered := func(i int) string {
		b := []byte(strings.Clone(string(raw)))
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	forged := base64.RawURLEncoding.EncodeToString([]byte("after:" + first.Items[19].ID))
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"its own query", `{"framework":"lexile","pageSize":20,"pageToken":%q}`, true},
		{"another page size", `{"framework":"lexile","pageSize":7,"pageToken":%q}`, true},
		{"no page size", `{"framework":"lexile","pageToken":%q}`, true},
		{"another framework", `{"framework":"quantile","pageSize":20,"pageToken":%q}`, false},
		{"the framework spelt otherwise", `{"framework":"LEXILE","pageSize":20,"pageToken":%q}`, false},
		{"a strand added", `{"framework":"lexile","pageSize":20,"strand":"` + strand + `","pageToken":%q}`, false},
		{"ids added", `{"framework":"lexile","pageSize":20,"ids":` + ids + `,"pageToken":%q}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkPageToken(t, s.Post("/api/content/items", fmt.Sprintf(c.body, tok)), c.ok)
		})
	}
	for _, c := range []struct{ name, body, tok string }{
		{"forged", `{"framework":"lexile","pageSize":20,"pageToken":%q}`, forged},
		{"version altered", `{"framework":"lexile","pageSize":20,"pageToken":%q}`, altered(0)},
		{"MAC altered", `{"framework":"lexile","pageSize":20,"pageToken":%q}`, altered(5)},
		{"id altered", `{"framework":"lexile","pageSize":20,"pageToken":%q}`, altered(len(raw) - 1)},
		{"truncated", `{"framework":"lexile","pageSize":20,"pageToken":%q}`, tok[:20]},
		{"strand's token without the strand", `{"framework":"lexile","pageSize":2,"pageToken":%q}`, ofStrand},
		{"strand's token with another strand", `{"framework":"lexile","pageSize":2,"strand":"` + mustStrand2(t, "lexile") + `","pageToken":%q}`, ofStrand},
		{"ids' token with other ids", `{"framework":"lexile","pageSize":1,"ids":["L000001","L000002","L000004"],"pageToken":%q}`, ofIDs},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkPageToken(t, s.Post("/api/content/items", fmt.Sprintf(c.body, c.tok)), false)
		})
	}
	t.Run("strand's token with its strand", func(t *testing.T) {
		t.Parallel()
		checkPageToken(t, s.Post("/api/content/items", `{"framework":"lexile","pageSize":2,"strand":"`+strand+`","pageToken":"`+ofStrand+`"}`), true)
	})
}

// mustStrand2 is the framework's second strand.
func mustStrand2(t *testing.T, fw string) string {
	t.Helper()
	strands, ok := measure.Demo().Strands(fw)
	if !ok || len(strands) < 2 {
		t.Fatalf("fewer than two %s strands", fw)
	}
	return strands[1]
}

func checkPageToken(t *testing.T, r servetest.Response, ok bool) {
	t.Helper()
	if ok {
		if r.Status != http.StatusOK {
			t.Errorf("got %d %s; want 200", r.Status, r.Body)
		}
		return
	}
	var e struct {
		ValidationErrors map[string][]string `json:"validationErrors"`
	}
	if r.Status != http.StatusBadRequest || json.Unmarshal(r.Body, &e) != nil {
		t.Fatalf("got %d %s; want 400", r.Status, r.Body)
	}
	if got := e.ValidationErrors["pageToken"]; len(got) != 1 || !strings.HasPrefix(got[0], "is not a page token this service wrote for this query") {
		t.Errorf("validationErrors = %v; want one on pageToken", e.ValidationErrors)
	}
}

// catalogOn is the catalog of a replica whose page keys come from keysDir.
func catalogOn(t *testing.T, keysDir string) (*Catalog, *PageKeys) {
	t.Helper()
	pages, err := NewPageKeys(keysDir)
	if err != nil {
		t.Fatal(err)
	}
	content, err := measure.OpenLive("")
	if err != nil {
		t.Fatal(err)
	}
	return &Catalog{content: content, limits: Limits{MaxItems: 5000}, pages: pages}, pages
}

func writeSigningKey(t *testing.T, dir, kid string) {
	t.Helper()
	_, pemBytes, err := token.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, kid+".pem"), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPageTokensAcrossReplicas: replicas that share a keys dir read each other's page tokens,
// also across a key rotation (the new key signs, the old still verifies, after a reload); a
// replica with other keys, or dev mode's random keys, refuses them with InvalidArgument.
func TestPageTokensAcrossReplicas(t *testing.T) {
	t.Parallel()
	dir, otherDir := t.TempDir(), t.TempDir()
	writeSigningKey(t, dir, "20260101T000000Z-aaaaaaaa")
	writeSigningKey(t, otherDir, "20260101T000000Z-aaaaaaaa")
	a, aKeys := catalogOn(t, dir)
	b, bKeys := catalogOn(t, dir)
	other, _ := catalogOn(t, otherDir)
	dev, _ := catalogOn(t, "")
	q := func(tok string) *scoringv1.ListItemsRequest {
		return &scoringv1.ListItemsRequest{Framework: ptr("lexile"), PageSize: ptr(int32(5)), PageToken: ptr(tok)}
	}
	page, err := a.ListItems(context.Background(), q(""))
	if err != nil || page.GetNextPageToken() == "" {
		t.Fatalf("first page: %v, next %q", err, page.GetNextPageToken())
	}
	tok := page.GetNextPageToken()
	if _, err := b.ListItems(context.Background(), q(tok)); err != nil {
		t.Errorf("replica b on a's token: %v; want the next page", err)
	}
	for name, c := range map[string]*Catalog{"other keys": other, "dev mode": dev} {
		if _, err := c.ListItems(context.Background(), q(tok)); !isPageTokenError(err) {
			t.Errorf("%s on a's token: %v; want InvalidArgument naming pageToken", name, err)
		}
	}
	writeSigningKey(t, dir, "20270101T000000Z-bbbbbbbb")
	if err := aKeys.Reload(); err != nil {
		t.Fatal(err)
	}
	rotated, err := a.ListItems(context.Background(), q(""))
	if err != nil {
		t.Fatal(err)
	}
	if rotated.GetNextPageToken() == tok {
		t.Error("after the rotation a writes the same token; want one signed with the new key")
	}
	if _, err := a.ListItems(context.Background(), q(tok)); err != nil {
		t.Errorf("a after the rotation on its old token: %v; want the next page", err)
	}
	if _, err := b.ListItems(context.Background(), q(rotated.GetNextPageToken())); !isPageTokenError(err) {
		t.Errorf("b before its reload on the new key's token: %v; want InvalidArgument naming pageToken", err)
	}
	if err := bKeys.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ListItems(context.Background(), q(rotated.GetNextPageToken())); err != nil {
		t.Errorf("b after its reload on the new key's token: %v; want the next page", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.pem"), []byte("no key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := bKeys.Reload(); err == nil {
		t.Error("reload of a broken keys dir: nil error; want the error")
	}
	if _, err := b.ListItems(context.Background(), q(rotated.GetNextPageToken())); err != nil {
		t.Errorf("b after a failed reload: %v; want the keys it had", err)
	}
}

func isPageTokenError(err error) bool {
	code, fields := fieldViolations(err)
	return code == codes.InvalidArgument && fields["pageToken"] && len(fields) == 1
}

// TestContentReloadNotFailedByKeys: a keys dir that stops loading keeps the page keys in use and
// does not make the content's reload a failure (which the frame reports as "keeping the last good
// bundle" while the new bundle is served); the issuer reports the keys dir under its own source.
func TestContentReloadNotFailedByKeys(t *testing.T) {
	t.Parallel()
	keys, contentDir := t.TempDir(), t.TempDir()
	writeSigningKey(t, keys, "20260101T000000Z-aaaaaaaa")
	contentDir = filepath.Join(contentDir, "bundle")
	if err := measure.ExtendBundle(measure.DemoFiles(), nil, contentDir); err != nil {
		t.Fatal(err)
	}
	content, err := measure.OpenLive(contentDir)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := NewPageKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	s := New(content, Limits{MaxItems: 5000}, slog.New(slog.DiscardHandler)).WithPageKeys(pages)
	if err := os.WriteFile(filepath.Join(keys, "broken.pem"), []byte("no key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := s.reload(); changed || err != nil {
		t.Errorf("reload with the same bundle and a broken keys dir: got %v, %v; want false, nil", changed, err)
	}
	items := filepath.Join(contentDir, "items.csv")
	data, err := os.ReadFile(items)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(items, bytes.Replace(data, []byte("L000001,lexile,Key Ideas,-131"), []byte("L000001,lexile,Key Ideas,-130"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := s.reload(); !changed || err != nil {
		t.Errorf("reload of a changed bundle beside a broken keys dir: got %v, %v; want true, nil", changed, err)
	}
}
