package scoring

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/token"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

type catalogItemsBody struct {
	Items []struct {
		ID         string    `json:"id"`
		Framework  string    `json:"framework"`
		Strand     string    `json:"strand"`
		Difficulty float64   `json:"difficulty"`
		MaxScore   int       `json:"maxScore"`
		Steps      []float64 `json:"steps"`
	} `json:"items"`
	NextPageToken string `json:"nextPageToken"`
	Bundle        struct {
		Source, Hash string
	} `json:"bundle"`
	APIVersion string `json:"apiVersion"`
}

func postJSON[T any](t *testing.T, s *servetest.Server, path, body string) T {
	t.Helper()
	r := s.Post(path, body)
	var out T
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil {
		t.Fatalf("POST %s %s: got %d %s; want 200", path, body, r.Status, r.Body)
	}
	return out
}

// TestCatalogItemsPaging: following nextPageToken from the first page lists every item of the
// framework once, in id byte order, each as the bundle holds it (maxScore, steps of a partial
// credit item), and the gRPC answer is the JSON one.
func TestCatalogItemsPaging(t *testing.T) {
	t.Parallel()
	s := start(t)
	b := measure.Demo()
	for _, c := range []struct {
		framework string
		pageSize  int
	}{{"lexile", 500}, {"QUANTILE", 333}, {"quantile", 5000}} {
		t.Run(fmt.Sprintf("%s by %d", c.framework, c.pageSize), func(t *testing.T) {
			t.Parallel()
			var ids []string
			tok, pages := "", 0
			for {
				page := postJSON[catalogItemsBody](t, s, "/api/content/items",
					fmt.Sprintf(`{"framework":%q,"pageSize":%d,"pageToken":%q}`, c.framework, c.pageSize, tok))
				pages++
				for _, it := range page.Items {
					want, ok := b.Item(it.ID)
					if !ok || want.Framework != strings.ToLower(c.framework) || it.Strand != want.Strand || it.Difficulty != want.Difficulty || it.MaxScore != want.MaxScore() {
						t.Fatalf("item %+v; the bundle has %+v", it, want)
					}
					if want.Polytomous() != (len(it.Steps) > 0) || (want.Polytomous() && !slices.Equal(it.Steps, want.Steps)) {
						t.Errorf("%s: steps %v; want %v", it.ID, it.Steps, want.Steps)
					}
					ids = append(ids, it.ID)
				}
				if page.Bundle.Source != "embedded demonstration bundle" || len(page.Bundle.Hash) != 12 || page.APIVersion != serve.Version {
					t.Errorf("bundle %+v, apiVersion %q", page.Bundle, page.APIVersion)
				}
				if page.NextPageToken == "" {
					break
				}
				if len(page.Items) != c.pageSize {
					t.Errorf("page %d: %d items with a next page; want full pages of %d", pages, len(page.Items), c.pageSize)
				}
				tok = page.NextPageToken
			}
			var want []string
			for _, it := range b.Items(measure.ItemQuery{Framework: strings.ToLower(c.framework), Limit: 1 << 30}).Items {
				want = append(want, it.ID)
			}
			if !slices.Equal(ids, want) || !slices.IsSorted(ids) {
				t.Errorf("got %d ids; want the %d of the framework in id order", len(ids), len(want))
			}
		})
	}
	t.Run("gRPC answers as JSON", func(t *testing.T) {
		t.Parallel()
		r := s.Post("/api/content/items", `{"framework":"lexile","pageSize":3,"strand":"`+mustStrand(t, "lexile")+`"}`)
		grpcAnswer, err := scoringv1.NewContentServiceClient(s.Conn).ListItems(s.Authed(context.Background()),
			&scoringv1.ListItemsRequest{Framework: ptr("lexile"), PageSize: ptr(int32(3)), Strand: ptr(mustStrand(t, "lexile"))})
		if err != nil {
			t.Fatal(err)
		}
		servetest.SameBytesAsProtojson(t, grpcAnswer, r.Body)
	})
}

func mustStrand(t *testing.T, fw string) string {
	t.Helper()
	strands, ok := measure.Demo().Strands(fw)
	if !ok || len(strands) == 0 {
		t.Fatalf("no %s strands", fw)
	}
	return strands[0]
}

// TestCatalogItemsFilters: strand and ids narrow the page; partial credit items show their steps.
func TestCatalogItemsFilters(t *testing.T) {
	t.Parallel()
	s := start(t)
	strand := mustStrand(t, "quantile")
	page := postJSON[catalogItemsBody](t, s, "/api/content/items", `{"framework":"quantile","strand":"`+strand+`","pageSize":5000}`)
	if len(page.Items) == 0 || page.NextPageToken != "" {
		t.Fatalf("strand %s: %d items, next %q", strand, len(page.Items), page.NextPageToken)
	}
	for _, it := range page.Items {
		if it.Strand != strand {
			t.Errorf("%s of strand %s in a page of %s", it.ID, it.Strand, strand)
		}
	}
	page = postJSON[catalogItemsBody](t, s, "/api/content/items", `{"framework":"lexile","ids":["LP00006","L000002","Q000001","NOPE"]}`)
	if len(page.Items) != 2 || page.Items[0].ID != "L000002" || page.Items[1].ID != "LP00006" {
		t.Fatalf("ids: got %+v; want L000002 and LP00006 (the lexile ids asked, in id order)", page.Items)
	}
	if pc := page.Items[1]; pc.MaxScore != 3 || len(pc.Steps) != 3 {
		t.Errorf("LP00006: maxScore %d, steps %v; want an item scored 0–3 with its 3 steps", pc.MaxScore, pc.Steps)
	}
	if d := page.Items[0]; d.MaxScore != 1 || len(d.Steps) != 0 {
		t.Errorf("L000002: maxScore %d, steps %v; want 1 and no steps ([])", d.MaxScore, d.Steps)
	}

	// The filters of scoring, each against the whole bank read without them.
	all := postJSON[catalogItemsBody](t, s, "/api/content/items", `{"framework":"lexile","pageSize":5000}`).Items
	for _, tc := range []struct {
		name, filter string
		keep         func(maxScore int) bool
	}{
		{"maxScore 3", `"maxScore":3`, func(m int) bool { return m == 3 }},
		{"maxScore 2", `"maxScore":2`, func(m int) bool { return m == 2 }},
		{"maxScore 1", `"maxScore":1`, func(m int) bool { return m == 1 }},
		{"partialCredit true", `"partialCredit":true`, func(m int) bool { return m >= 2 }},
		{"partialCredit false", `"partialCredit":false`, func(m int) bool { return m == 1 }},
	} {
		var want []string
		for _, it := range all {
			if tc.keep(it.MaxScore) {
				want = append(want, it.ID)
			}
		}
		got := postJSON[catalogItemsBody](t, s, "/api/content/items", `{"framework":"lexile","pageSize":5000,`+tc.filter+`}`)
		var ids []string
		for _, it := range got.Items {
			ids = append(ids, it.ID)
		}
		if len(want) == 0 || len(want) == len(all) || !slices.Equal(ids, want) {
			t.Errorf("%s: got %d items %v…; want the %d of %d that pass", tc.name, len(ids), ids[:min(len(ids), 3)], len(want), len(all))
		}
	}
}

// TestCatalogItemsRefusals: every rule, both sides of each bound.
func TestCatalogItemsRefusals(t *testing.T) {
	t.Parallel()
	s := start(t)
	tooMany := make([]string, 5001)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("L%06d", i+1)
	}
	many, _ := json.Marshal(tooMany)
	justEnough, _ := json.Marshal(tooMany[:5000])
	for _, c := range []struct {
		name, body, field, msg string // field "" = accepted
	}{
		{"pageSize 1 accepted", `{"framework":"lexile","pageSize":1}`, "", ""},
		{"pageSize 5000 accepted", `{"framework":"lexile","pageSize":5000}`, "", ""},
		{"pageSize 0 refused", `{"framework":"lexile","pageSize":0}`, "pageSize", "must be between 1 and 5000, got 0"},
		{"pageSize 5001 refused", `{"framework":"lexile","pageSize":5001}`, "pageSize", "must be between 1 and 5000, got 5001"},
		{"5000 ids accepted", `{"framework":"lexile","ids":` + string(justEnough) + `}`, "", ""},
		{"5001 ids refused", `{"framework":"lexile","ids":` + string(many) + `}`, "ids", "holds 5001 ids; the limit is 5000"},
		{"framework missing", `{}`, "framework", "is required (lexile or quantile)"},
		{"framework unknown", `{"framework":"klingon"}`, "framework", `unknown framework "klingon" (want lexile or quantile)`},
		{"strand unknown", `{"framework":"lexile","strand":"Poetry"}`, "strand", `unknown lexile strand "Poetry"`},
		{"page token not ours", `{"framework":"lexile","pageToken":"garbage!"}`, "pageToken", "is not a page token this service wrote for this query"},
		{"unknown field", `{"framework":"lexile","pageSise":5}`, "pageSise", `unknown field "pageSise"; did you mean "pageSize"?`},
		{"maxScore 1 accepted", `{"framework":"lexile","maxScore":1}`, "", ""},
		{"maxScore 100 accepted", `{"framework":"lexile","maxScore":100}`, "", ""},
		{"maxScore 0 refused", `{"framework":"lexile","maxScore":0}`, "maxScore", "must be between 1 (an item scored right or wrong) and 100, got 0"},
		{"maxScore 101 refused", `{"framework":"lexile","maxScore":101}`, "maxScore", "must be between 1 (an item scored right or wrong) and 100, got 101"},
		{"maxScore a string", `{"framework":"lexile","maxScore":"3"}`, "", ""},
		{"partialCredit not a boolean", `{"framework":"lexile","partialCredit":"yes"}`, "partialCredit", "must be true or false"},
		{"maxScore 1 with partialCredit true", `{"framework":"lexile","maxScore":1,"partialCredit":true}`, "nonFieldErrors", "maxScore 1 and partialCredit true select no item"},
		{"maxScore 3 with partialCredit false", `{"framework":"lexile","maxScore":3,"partialCredit":false}`, "nonFieldErrors", "maxScore 3 and partialCredit false select no item"},
		{"maxScore 2 with partialCredit true accepted", `{"framework":"lexile","maxScore":2,"partialCredit":true}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := s.Post("/api/content/items", c.body)
			if c.field == "" {
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
			if got := e.ValidationErrors[c.field]; len(got) != 1 || !strings.HasPrefix(got[0], c.msg) {
				t.Errorf("validationErrors[%s] = %v; want one starting %q", c.field, got, c.msg)
			}
		})
	}
	_, err := scoringv1.NewContentServiceClient(s.Conn).ListItems(s.Authed(context.Background()), &scoringv1.ListItemsRequest{PageSize: ptr(int32(0))})
	if code, fields := fieldViolations(err); code != codes.InvalidArgument || !fields["framework"] || !fields["pageSize"] {
		t.Errorf("gRPC: got %v %v; want InvalidArgument naming framework and pageSize", code, fields)
	}
}

// TestCatalogFormsLinksStrands: the other three lists, as the bundle holds them.
func TestCatalogFormsLinksStrands(t *testing.T) {
	t.Parallel()
	s := start(t)
	b := measure.Demo()
	forms := postJSON[struct {
		Forms []struct {
			Form, Framework string
			Items           []string
		} `json:"forms"`
	}](t, s, "/api/content/forms", `{}`)
	if len(forms.Forms) != len(b.Forms("")) || len(forms.Forms) == 0 {
		t.Fatalf("got %d forms; want %d", len(forms.Forms), len(b.Forms("")))
	}
	for _, f := range forms.Forms {
		want, ok := b.Form(f.Form)
		if !ok || want.Framework != f.Framework || !slices.Equal(want.Items, f.Items) {
			t.Errorf("form %+v; the bundle has %+v", f, want)
		}
	}
	quantile := postJSON[struct {
		Forms []struct{ Form, Framework string } `json:"forms"`
	}](t, s, "/api/content/forms", `{"framework":"Quantile"}`)
	if len(quantile.Forms) != len(b.Forms("quantile")) {
		t.Errorf("quantile forms: got %d; want %d", len(quantile.Forms), len(b.Forms("quantile")))
	}
	links := postJSON[struct {
		Links []struct {
			LinkID    string  `json:"linkId"`
			Framework string  `json:"framework"`
			MinScore  float64 `json:"minScore"`
			MaxScore  float64 `json:"maxScore"`
		} `json:"links"`
	}](t, s, "/api/content/links", `{}`)
	if len(links.Links) != len(b.Links()) {
		t.Fatalf("got %d links; want %d", len(links.Links), len(b.Links()))
	}
	for i, l := range b.Links() {
		if got := links.Links[i]; got.LinkID != l.ID || got.Framework != l.Framework || got.MinScore != l.Min || got.MaxScore != l.Max {
			t.Errorf("link %d: got %+v; want %s of %s", i, links.Links[i], l.ID, l.Framework)
		}
	}
	strands := postJSON[struct {
		Strands   []string `json:"strands"`
		Framework string   `json:"framework"`
	}](t, s, "/api/content/strands", `{"framework":"lexile"}`)
	want, _ := b.Strands("lexile")
	if !slices.Equal(strands.Strands, want) || strands.Framework != "lexile" {
		t.Errorf("strands: got %+v; want %v", strands, want)
	}
	for path, body := range map[string]string{"/api/content/strands": `{}`, "/api/content/forms": `{"framework":"klingon"}`} {
		if r := s.Post(path, body); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"framework"`) {
			t.Errorf("%s %s: got %d %s; want 400 naming framework", path, body, r.Status, r.Body)
		}
	}
}

// TestCatalogReload: the catalog reads the bundle in force; a reload that adds an item shows at
// once, with the new hash.
func TestCatalogReload(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := measure.ExtendBundle(measure.DemoFiles(), nil, dir); err != nil {
		t.Fatal(err)
	}
	var live *measure.Live
	s := servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		var err error
		if live, err = measure.OpenLive(dir); err != nil {
			t.Fatal(err)
		}
		return New(live, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, nil)
	const ask = `{"framework":"quantile","ids":["QNEW01"]}`
	before := postJSON[catalogItemsBody](t, s, "/api/content/items", ask)
	if len(before.Items) != 0 || before.Bundle.Source != "bundle" {
		t.Fatalf("before: %+v; want no QNEW01, source the directory's name", before)
	}
	f, err := os.OpenFile(filepath.Join(dir, "items.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	strand := mustStrand(t, "quantile")
	if _, err := fmt.Fprintf(f, "QNEW01,quantile,%s,700\n", strand); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if changed, err := live.Reload(); err != nil || !changed {
		t.Fatalf("reload: changed %v, %v", changed, err)
	}
	after := postJSON[catalogItemsBody](t, s, "/api/content/items", ask)
	if len(after.Items) != 1 || after.Items[0].Difficulty != 700 || after.Bundle.Hash == before.Bundle.Hash {
		t.Errorf("after: %+v; want QNEW01 at 700 and a new hash (was %s)", after, before.Bundle.Hash)
	}
}

// TestCatalogPermission: content:read is needed (a client with only score:standard gets 403 on
// both fronts), and is a scoring permission.
func TestCatalogPermission(t *testing.T) {
	t.Parallel()
	secret, hash, err := token.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	clients := filepath.Join(t.TempDir(), "clients.yaml")
	yaml := "clients:\n  - clientId: scorer\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [score:standard]\n"
	if err := os.WriteFile(clients, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive("")
		if err != nil {
			t.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, func(cfg *serve.Config) { cfg.ClientsFile = clients })
	r := s.Do(http.MethodPost, "/authToken", "application/json", `{"clientId":"scorer","clientSecret":"`+secret+`"}`)
	var tok struct{ AccessToken string }
	if r.Status != 200 || json.Unmarshal(r.Body, &tok) != nil {
		t.Fatalf("authToken: %d %s", r.Status, r.Body)
	}
	r = s.Do(http.MethodPost, "/api/content/strands", "application/json", `{"framework":"lexile"}`, "Authorization", "Bearer "+tok.AccessToken)
	if r.Status != http.StatusForbidden {
		t.Errorf("without content:read: got %d %s; want 403", r.Status, r.Body)
	}
	if r := s.Post("/api/content/strands", `{"framework":"lexile"}`); r.Status != http.StatusOK {
		t.Errorf("the demo client (*): got %d %s; want 200", r.Status, r.Body)
	}
	ctx := metadataBearer(context.Background(), tok.AccessToken)
	_, err = scoringv1.NewContentServiceClient(s.Conn).ListStrands(ctx, &scoringv1.ListStrandsRequest{Framework: ptr("lexile")})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("gRPC without content:read: got %v; want PermissionDenied", err)
	}
}

// fieldViolations is a gRPC error's code and the fields its BadRequest details name.
func fieldViolations(err error) (codes.Code, map[string]bool) {
	st := status.Convert(err)
	fields := map[string]bool{}
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields[v.GetField()] = true
			}
		}
	}
	return st.Code(), fields
}

// metadataBearer is ctx carrying a bearer token to the gRPC port.
func metadataBearer(ctx context.Context, tok string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
}

// TestCatalogFrameworks: the demo bundle's offer per framework, and the gRPC answer is the JSON one.
func TestCatalogFrameworks(t *testing.T) {
	t.Parallel()
	s := start(t)
	r := s.Post("/api/content/frameworks", `{}`)
	const want = `{"frameworks":[` +
		`{"name":"lexile","subject":"reading","label":"L","negativePrefix":"BR","unitsPerLogit":180,"successAtMatch":0.75,"displayMin":-400,"displayMax":1825,"items":2020,"partialCreditItems":20,"strands":5,"forms":3,"links":2,"normCurve":true,"benchmarks":true,"normsTables":39},` +
		`{"name":"quantile","subject":"math","label":"Q","negativePrefix":"EM","unitsPerLogit":180,"successAtMatch":0.5,"displayMin":-400,"displayMax":1650,"items":1520,"partialCreditItems":20,"strands":5,"forms":3,"links":2,"normCurve":true,"benchmarks":true,"normsTables":39}],` +
		`"bundle":{"source":"embedded demonstration bundle","hash":"` + "%s" + `"},"apiVersion":"` + "%s" + `"}`
	content, _ := measure.OpenLive("")
	if got := string(r.Body); r.Status != 200 || got != fmt.Sprintf(want, content.Version(), serve.Version) {
		t.Errorf("got %d %s;\nwant %s", r.Status, got, fmt.Sprintf(want, content.Version(), serve.Version))
	}
	grpcAnswer, err := scoringv1.NewContentServiceClient(s.Conn).ListFrameworks(s.Authed(context.Background()), &scoringv1.ListFrameworksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	servetest.SameBytesAsProtojson(t, grpcAnswer, r.Body)
}
