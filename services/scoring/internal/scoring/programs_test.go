package scoring

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/token"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// tenant is a client of the programs tests: what the clients file gives it, and what it sees.
type tenant struct {
	id       string
	programs string   // the clients file's programs value; "" leaves the key out
	sees     []string // the programs whose content it sees
}

var tenants = []tenant{
	{"acme", "[acme]", []string{servetest.ProgramA}},
	{"beta", "[beta]", []string{servetest.ProgramB}},
	{"plain", "", nil},
	{"both", "[acme, beta]", []string{servetest.ProgramA, servetest.ProgramB}},
	{"ops", `["*"]`, []string{servetest.ProgramA, servetest.ProgramB}},
}

// tenantsFile writes a clients file of the tenants (programs of each as progs gives, else its
// own), every permission on scoring, and returns its path and each client's secret.
func tenantsFile(t *testing.T, path string, secrets map[string]string, progs map[string]string) map[string]string {
	t.Helper()
	if secrets == nil {
		secrets = map[string]string{}
	}
	var b strings.Builder
	b.WriteString("clients:\n")
	for _, tn := range tenants {
		secret, ok := secrets[tn.id]
		hash := secrets[tn.id+"#hash"]
		if !ok {
			var err error
			if secret, hash, err = token.GenerateSecret(); err != nil {
				t.Fatal(err)
			}
			secrets[tn.id], secrets[tn.id+"#hash"] = secret, hash
		}
		fmt.Fprintf(&b, "  - clientId: %s\n    secretHash: %s\n    services: [scoring]\n    permissions: [\"*\"]\n", tn.id, hash)
		programs := tn.programs
		if p, ok := progs[tn.id]; ok {
			programs = p
		}
		if programs != "" {
			fmt.Fprintf(&b, "    programs: %s\n", programs)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return secrets
}

// startTenants runs the scoring service on the bundle in dir with the tenants' clients file.
func startTenants(t *testing.T, dir string) (*servetest.Server, string, map[string]string) {
	t.Helper()
	clients := filepath.Join(t.TempDir(), "clients.yaml")
	secrets := tenantsFile(t, clients, nil, nil)
	s := servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive(dir)
		if err != nil {
			t.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.NewTextHandler(io.Discard, nil))).Service()
	}, func(cfg *serve.Config) { cfg.ClientsFile = clients })
	return s, clients, secrets
}

// programsCorpus is the demo differential corpus and requests naming each program's content on
// every path: adaptive pools and exclusions, catalog filters and pages, the frameworks' offers.
func programsCorpus(t *testing.T) []servetest.Request {
	t.Helper()
	raw, err := os.ReadFile("testdata/demo/requests.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	lines = append(lines,
		"/api/score/adaptive/next\t"+`{"framework":"lexile","items":[],"pool":["L000002","L000003","L000004","L000005","LP00001","LP00002"]}`,
		"/api/score/adaptive/next\t"+`{"framework":"lexile","items":[{"id":"L000003","result":1}]}`,
		"/api/score/adaptive/next\t"+`{"framework":"lexile","items":[{"id":"L000100","result":1}],"exclude":["L000002","L000003"]}`,
		"/api/score/adaptive/next\t"+`{"framework":"quantile","items":[],"stop":{"maxItems":3}}`,
		"/api/score/items/ids/standard\t"+`{"items":[{"id":"L000002"},{"id":"LP00002"},{"id":"LP00003"}],"numberCorrect":4}`,
		"/api/score/items/idsWithResults/standard\t"+`{"items":[{"id":"LP00002","result":2},{"id":"LP00003","result":2}]}`,
		"/api/content/items\t"+`{"framework":"lexile","ids":["L000001","L000002","L000003","L000004","LP00002","LP00003"]}`,
		"/api/content/items\t"+`{"framework":"quantile","pageSize":4}`,
		"/api/content/frameworks\t{}",
		"/api/score/form/id/standard\t"+`{"formId":"FORM-MATH-G2","numberCorrect":3}`,
		"/api/score/scale/bayes\t"+`{"linkId":"NATL-MATH-PT","scaleScore":150,"scaleSem":15,"priorAbility":500,"priorUncertainty":100,"elapsedDays":0}`,
	)
	var out []servetest.Request
	for _, line := range lines {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, body, _ := strings.Cut(line, "\t")
		out = append(out, servetest.Request{Path: path, Body: []byte(body)})
	}
	return out
}

// unbound blanks what differs between two deployments by design: the bundle's hash (of its
// files), page tokens (each deployment signs its own) and request ids.
var unbound = regexp.MustCompile(`"(hash|nextPageToken|requestId)":"[^"]*"`)

// answerText is an HTTP answer as the tests compare it: status, headers but the date and the
// request id, and the body with unbound blanked.
func answerText(r servetest.Response) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(r.Status) + "\n")
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		if k != "Date" && k != "X-Request-Id" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.Header[k], ", "))
	}
	b.Write(unbound.ReplaceAll(r.Body, []byte(`"$1":""`)))
	return b.String()
}

// post sends a JSON or NDJSON body with a bearer token.
func post(s *servetest.Server, tok, path string, body []byte) servetest.Response {
	if bytes.HasPrefix(body, []byte("NDJSON ")) {
		nd := strings.ReplaceAll(strings.TrimPrefix(string(body), "NDJSON "), `\n`, "\n")
		return s.Do(http.MethodPost, path, "application/x-ndjson", nd, "Authorization", "Bearer "+tok)
	}
	return s.Do(http.MethodPost, path, "application/json", string(body), "Authorization", "Bearer "+tok)
}

// TestProgramsAnswerAsSingleTenant: each client of a deployment shared by two partners' programs
// gets on every path, on both fronts and in both batches, exactly the answer the same request
// gets from a deployment holding only what that client sees (the single-tenant bundle, where the
// other programs' content never existed): the visible answers are the single-tenant answers, and
// a hidden item, form or link is answered as one that does not exist (status, headers, body).
func TestProgramsAnswerAsSingleTenant(t *testing.T) {
	t.Parallel()
	pc := servetest.Programs(t)
	full, _, secrets := startTenants(t, pc.Dir)
	reqs := programsCorpus(t)
	for _, tn := range tenants {
		t.Run(tn.id, func(t *testing.T) {
			t.Parallel()
			single, _ := startOn(t, pc.Single(t, tn.sees...))
			tok := full.Login(tn.id, secrets[tn.id])
			t.Run("json", func(t *testing.T) {
				for i, q := range reqs {
					got, want := answerText(post(full, tok, q.Path, q.Body)), answerText(post(single, single.Token(), q.Path, q.Body))
					if got != want {
						t.Errorf("request %d %s %s:\ngot  %s\nwant %s", i, q.Path, q.Body, got, want)
					}
				}
			})
			t.Run("ndjson batch", func(t *testing.T) {
				var unary []servetest.Request
				for _, q := range reqs {
					if !bytes.HasPrefix(q.Body, []byte("NDJSON ")) {
						unary = append(unary, q)
					}
				}
				body := append([]byte("NDJSON "), bytes.ReplaceAll(servetest.BatchBody(unary), []byte("\n"), []byte(`\n`))...)
				got := post(full, tok, "/api/score/batch", body)
				want := post(single, single.Token(), "/api/score/batch", body)
				answers, summary := servetest.ParseBatch(t, got.Body)
				if got.Status != http.StatusOK || len(answers) != len(unary) || summary == nil {
					t.Fatalf("batch: got %d, %d answers, summary %v; want 200, %d answers and a summary", got.Status, len(answers), summary, len(unary))
				}
				if g, w := answerText(got), answerText(want); g != w {
					t.Errorf("batch:\ngot  %s\nwant %s", g, w)
				}
			})
			t.Run("grpc", func(t *testing.T) {
				checkGRPCAsSingle(t, full, single, tok, servetest.GRPCRecords(t, reqs))
			})
		})
	}
}

// checkGRPCAsSingle compares each record's unary gRPC answer, and the gRPC batch of the scoring
// records, on the shared deployment (with tok) and the single-tenant one.
func checkGRPCAsSingle(t *testing.T, full, single *servetest.Server, tok string, recs []servetest.GRPCRecord) {
	t.Helper()
	fctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	sctx := single.Authed(context.Background())
	var batch []servetest.GRPCRecord
	for i, rec := range recs {
		got, gotErr := full.UnaryGRPC(fctx, rec)
		want, wantErr := single.UnaryGRPC(sctx, rec)
		if !sameAnswer(got, gotErr, want, wantErr) {
			t.Errorf("rpc %d %s %v:\ngot  %v %v\nwant %v %v", i, rec.Method, rec.Request, got, gotErr, want, wantErr)
		}
		if strings.HasPrefix(rec.Method, "/yardstick.scoring.v1.ScoringService/") {
			batch = append(batch, rec)
		}
	}
	records := make([]proto.Message, len(batch))
	for i, r := range batch {
		records[i] = servetest.RecordOf(t, scoringv1.ScoringService_ScoreBatch_FullMethodName, "r"+strconv.Itoa(i), r)
	}
	got, _, err := full.GRPCBatch(fctx, scoringv1.ScoringService_ScoreBatch_FullMethodName, records)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := single.GRPCBatch(sctx, scoringv1.ScoringService_ScoreBatch_FullMethodName, records)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) != len(records) {
		t.Fatalf("grpc batch: got %d answers, single-tenant %d; want %d", len(got), len(want), len(records))
	}
	for i := range got {
		gid, g, gErr := servetest.AnswerOf(got[i])
		wid, w, wErr := servetest.AnswerOf(want[i])
		if gid != wid || !sameAnswer(g, gErr, w, wErr) {
			t.Errorf("grpc batch record %d %s:\ngot  %s %v %v\nwant %s %v %v", i, batch[i].Method, gid, g, gErr, wid, w, wErr)
		}
	}
}

// sameAnswer compares two gRPC answers: the same status, or equal responses once the bundle's
// hash and the page token are blanked.
func sameAnswer(a proto.Message, aErr error, b proto.Message, bErr error) bool {
	if aErr != nil || bErr != nil {
		return aErr != nil && bErr != nil && servetest.SameStatus(aErr, bErr)
	}
	return proto.Equal(blankUnbound(a), blankUnbound(b))
}

func blankUnbound(m proto.Message) proto.Message {
	m = proto.Clone(m)
	r := m.ProtoReflect()
	if fd := r.Descriptor().Fields().ByName("next_page_token"); fd != nil {
		r.Clear(fd)
	}
	if fd := r.Descriptor().Fields().ByName("bundle"); fd != nil && r.Has(fd) {
		info := r.Mutable(fd).Message()
		info.Clear(info.Descriptor().Fields().ByName(protoreflect.Name("hash")))
	}
	return m
}
