package scoring

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/yardstick-dev/yardstick/proto/yardstick"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// The dichotomous differential test: partial credit (METHOD §13) must leave every answer to a
// request of dichotomous items exactly as it was. testdata/dichotomous.ndjson.gz holds a corpus
// of such requests on every scoring path (valid ones of every shape, and bad ones whose messages
// partial credit does not change) with the answers of the build before partial credit, commit
// dc8bcb8: its JSON front's status and body, and its gRPC answer (the response's protobuf
// encoding, or the status) where protojson can read the body. scripts/record-dichotomous.sh
// recorded them: it builds that commit's scoring service, runs it in dev mode on free ports and
// runs this test with -record-http and -record-grpc, which generates the corpus (seeded by
// -record-seed) and writes each answer the old build gave.
//
// The test sends every request to this build four ways — a unary JSON call, a unary gRPC call,
// one NDJSON batch of them all and one gRPC ScoreBatch stream of them all — and holds each answer
// to the recorded one byte for byte (the protobuf encoding deterministic, a status by code,
// message and details), except for two differences by design: apiVersion (the build's version)
// is not compared, and the adaptive answer's next item gains maxScore, which must be 1 (a
// dichotomous item) and is otherwise the recorded answer. The corpus's adaptive requests all
// carry a pool, so that items the content bundle gains later cannot change their answers.
var (
	recordHTTP = flag.String("record-http", "", "record the corpus's answers from the scoring service at this base URL (scripts/record-dichotomous.sh)")
	recordGRPC = flag.String("record-grpc", "", "with -record-http: the same service's gRPC address")
	recordSeed = flag.Uint64("record-seed", 28, "with -record-http: the corpus's seed")
	recordN    = flag.Int("record-n", 240, "with -record-http: requests per scoring path")
)

const corpusFile = "testdata/dichotomous.ndjson.gz"

// corpusEntry is one request of the corpus and the old build's answers.
type corpusEntry struct {
	Path   string          `json:"path"`
	Body   json.RawMessage `json:"body"`
	Status int             `json:"status"`
	Answer json.RawMessage `json:"answer"`
	// GRPC is the gRPC response's deterministic protobuf encoding with apiVersion cleared, or
	// GRPCStatus the status (google.rpc.Status's deterministic encoding, details included);
	// neither when protojson cannot read the body (JSON-front spellings such as itemid).
	GRPC       []byte `json:"grpc,omitempty"`
	GRPCStatus []byte `json:"grpcStatus,omitempty"`
}

func TestDichotomousDifferential(t *testing.T) {
	if *recordHTTP != "" {
		recordCorpus(t)
		return
	}
	t.Parallel()
	corpus := readCorpus(t)
	s := start(t)
	methods := methodsByPath(t)
	ctx := s.Authed(context.Background())

	reqs := make([]servetest.Request, len(corpus))
	var records []servetest.GRPCRecord
	var recordOf []int // the corpus entry of each gRPC record
	statuses := map[int]int{}
	for i, e := range corpus {
		reqs[i] = servetest.Request{Path: e.Path, Body: e.Body}
		statuses[e.Status]++
		if e.GRPC != nil || e.GRPCStatus != nil {
			records = append(records, servetest.GRPCRecord{Method: methods[e.Path], Request: requestOf(t, methods[e.Path], e.Body)})
			recordOf = append(recordOf, i)
		}
	}
	// The corpus must mean something: every path, answers and refusals, most also over gRPC.
	paths := map[string]bool{}
	for _, e := range corpus {
		paths[e.Path] = true
	}
	if len(paths) != 11 || statuses[200] < len(corpus)/2 || statuses[400] < len(corpus)/20 || len(records) < len(corpus)*9/10 {
		t.Fatalf("corpus too narrow: %d paths, statuses %v, %d of %d over gRPC", len(paths), statuses, len(records), len(corpus))
	}

	failures := 0
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
		if failures++; failures > 20 {
			t.FailNow()
		}
	}
	t.Run("JSON unary and NDJSON batch", func(t *testing.T) {
		unary := s.Unary(reqs)
		batch := s.Batch("/api/score/batch", string(servetest.BatchBody(reqs)))
		answers, _ := servetest.ParseBatch(t, batch.Body)
		if batch.Status != http.StatusOK || len(answers) != len(corpus) {
			t.Fatalf("batch: %d, %d answers for %d records", batch.Status, len(answers), len(corpus))
		}
		for i, e := range corpus {
			want := sameVersion(e.Answer)
			if got := newJSON(t, e.Path, unary[i].Body); unary[i].Status != e.Status || !bytes.Equal(got, want) {
				fail("%s %s:\ngot  %d %s\nwant %d %s", e.Path, e.Body, unary[i].Status, got, e.Status, want)
			}
			if got := newJSON(t, e.Path, answers[i].Body); answers[i].Status != e.Status || !bytes.Equal(got, want) {
				fail("batch record %d %s %s:\ngot  %d %s\nwant %d %s", i, e.Path, e.Body, answers[i].Status, got, e.Status, want)
			}
		}
	})
	t.Run("gRPC unary and ScoreBatch", func(t *testing.T) {
		batch := make([]proto.Message, len(records))
		for j, r := range records {
			batch[j] = servetest.RecordOf(t, scoringv1.ScoringService_ScoreBatch_FullMethodName, "r"+strconv.Itoa(j), r)
		}
		answers, _, err := s.GRPCBatch(ctx, scoringv1.ScoringService_ScoreBatch_FullMethodName, batch)
		if err != nil || len(answers) != len(records) {
			t.Fatalf("ScoreBatch: %v, %d answers for %d records", err, len(answers), len(records))
		}
		for j, r := range records {
			e := corpus[recordOf[j]]
			resp := newResponse(t, r.Method)
			err := s.Conn.Invoke(ctx, r.Method, r.Request, resp)
			if msg := grpcDiff(t, e, resp, err); msg != "" {
				fail("%s %s: unary: %s", e.Path, e.Body, msg)
			}
			_, got, gotErr := servetest.AnswerOf(answers[j])
			if msg := grpcDiff(t, e, got, gotErr); msg != "" {
				fail("%s %s: ScoreBatch: %s", e.Path, e.Body, msg)
			}
		}
	})
}

// sameVersion is a JSON answer with its apiVersion written as "dev", so that builds of
// different versions compare.
func sameVersion(body []byte) []byte {
	const key = `"apiVersion":"`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return bytes.TrimRight(body, "\n")
	}
	j := bytes.IndexByte(body[i+len(key):], '"')
	out := append([]byte(nil), body[:i+len(key)]...)
	out = append(out, "dev"...)
	return bytes.TrimRight(append(out, body[i+len(key)+j:]...), "\n")
}

// newJSON is this build's JSON answer as the old build would have written it: the version as
// sameVersion writes it and, on the adaptive path, next without its maxScore, which must be 1.
func newJSON(t *testing.T, path string, body []byte) []byte {
	t.Helper()
	body = sameVersion(body)
	if path != "/api/score/adaptive/next" || bytes.HasPrefix(body, []byte(`{"next":null`)) || !bytes.HasPrefix(body, []byte(`{"next":{`)) {
		return body
	}
	end := bytes.IndexByte(body, '}')
	const field = `,"maxScore":1}`
	if end < 0 || !bytes.HasSuffix(body[:end+1], []byte(field)) {
		t.Errorf("adaptive answer's next has no maxScore 1: %s", body)
		return body
	}
	return append(append([]byte(nil), body[:end+1-len(field)]...), body[end:]...)
}

// grpcDiff compares a gRPC answer of this build with e's recorded one ("" when the same): the
// response's deterministic encoding with apiVersion cleared (and an adaptive next's maxScore,
// which must be 1), or the status.
func grpcDiff(t *testing.T, e corpusEntry, resp proto.Message, err error) string {
	t.Helper()
	if e.GRPCStatus != nil {
		want := new(spb.Status)
		if perr := proto.Unmarshal(e.GRPCStatus, want); perr != nil {
			t.Fatal(perr)
		}
		if err == nil || !servetest.SameStatus(err, status.ErrorProto(want)) {
			return fmt.Sprintf("got %v %v; want status %v", resp, err, want)
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("got %v; want a response", err)
	}
	resp = proto.Clone(resp)
	if n, ok := resp.(*scoringv1.NextItemResponse); ok && n.Next != nil {
		if n.Next.MaxScore != 1 {
			return fmt.Sprintf("next.maxScore %d; want 1", n.Next.MaxScore)
		}
		n.Next.MaxScore = 0
	}
	got := deterministic(t, resp)
	if !bytes.Equal(got, e.GRPC) {
		return fmt.Sprintf("got %v; encoding differs from the recorded answer", resp)
	}
	return ""
}

// deterministic is m's deterministic protobuf encoding with its api_version cleared.
func deterministic(t *testing.T, m proto.Message) []byte {
	t.Helper()
	m = proto.Clone(m)
	r := m.ProtoReflect()
	if f := r.Descriptor().Fields().ByName("api_version"); f != nil {
		r.Clear(f)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// methodsByPath maps each scoring path of the contract to its rpc.
func methodsByPath(t *testing.T) map[string]string {
	t.Helper()
	routes, err := yardstick.Routes()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range routes {
		if strings.HasPrefix(r.FullMethod, "/yardstick.scoring.v1.ScoringService/") {
			out[r.Path] = r.FullMethod
		}
	}
	return out
}

func methodDesc(t *testing.T, full string) protoreflect.MethodDescriptor {
	t.Helper()
	svc, name, _ := strings.Cut(strings.TrimPrefix(full, "/"), "/")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		t.Fatal(err)
	}
	return d.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(name))
}

// requestOf is body read by protojson into full's request type, or nil when protojson cannot
// read it.
func requestOf(t *testing.T, full string, body []byte) proto.Message {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(methodDesc(t, full).Input().FullName())
	if err != nil {
		t.Fatal(err)
	}
	m := mt.New().Interface()
	if protojson.Unmarshal(body, m) != nil {
		return nil
	}
	return m
}

func newResponse(t *testing.T, full string) proto.Message {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(methodDesc(t, full).Output().FullName())
	if err != nil {
		t.Fatal(err)
	}
	return mt.New().Interface()
}

func readCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	f, err := os.Open(corpusFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusEntry
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s line %d: %v", corpusFile, len(out)+1, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// recordCorpus generates the corpus and records the answers of the service at -record-http
// and -record-grpc into corpusFile.
func recordCorpus(t *testing.T) {
	base := strings.TrimRight(*recordHTTP, "/")
	conn, err := grpc.NewClient(*recordGRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tok := recordToken(t, base)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	methods := methodsByPath(t)

	var out bytes.Buffer
	z := gzip.NewWriter(&out)
	enc := json.NewEncoder(z)
	enc.SetEscapeHTML(false)
	statuses := map[int]int{}
	for _, q := range dichotomousCorpus(*recordSeed, *recordN) {
		e := corpusEntry{Path: q.Path, Body: q.Body}
		req, err := http.NewRequest(http.MethodPost, base+q.Path, bytes.NewReader(q.Body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		e.Status, e.Answer = resp.StatusCode, sameVersion(answer)
		statuses[e.Status]++
		if e.Status != http.StatusOK && e.Status != http.StatusBadRequest {
			t.Fatalf("%s %s: %d %s (the corpus holds answers and validation refusals only)", q.Path, q.Body, e.Status, answer)
		}
		if m := requestOf(t, methods[q.Path], q.Body); m != nil {
			r := newResponse(t, methods[q.Path])
			if err := conn.Invoke(ctx, methods[q.Path], m, r); err != nil {
				e.GRPCStatus = deterministicStatus(t, err)
			} else {
				e.GRPC = deterministic(t, r)
			}
		}
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(corpusFile, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s: statuses %v", filepath.Base(corpusFile), statuses)
}

// deterministicStatus is err's status encoded with each detail re-encoded deterministically
// (ErrorInfo's metadata is a map, written in any order), so that recording twice writes the same
// file.
func deterministicStatus(t *testing.T, err error) []byte {
	t.Helper()
	st := status.Convert(err).Proto()
	det := proto.MarshalOptions{Deterministic: true}
	for _, d := range st.GetDetails() {
		m, err := d.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		if d.Value, err = det.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	b, err := det.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func recordToken(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Post(base+"/authToken", "application/json", strings.NewReader(`{"clientId":"demo","clientSecret":"demo-secret"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("authToken: %d %v", resp.StatusCode, err)
	}
	return tok.AccessToken
}

// corpusGen draws the corpus's requests from the demonstration bundle's dichotomous items.
type corpusGen struct{ r *rand.Rand }

var corpusStrands = map[string][]string{
	"lexile":   {"Vocabulary", "Key Ideas", "Craft and Structure", "Integration of Knowledge", "Foundational Skills"},
	"quantile": {"Number and Operations", "Algebraic Thinking", "Geometry", "Measurement and Data", "Statistics and Probability"},
}

// ids are n distinct item ids of fw's dichotomous demo items (L and S: lexile, Q: quantile).
func (g corpusGen) ids(fw string, n int) []string {
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		var id string
		switch {
		case fw == "quantile":
			id = fmt.Sprintf("Q%06d", 1+g.r.IntN(1500))
		case g.r.IntN(5) == 0:
			id = fmt.Sprintf("S%06d", 1+g.r.IntN(400))
		default:
			id = fmt.Sprintf("L%06d", 1+g.r.IntN(1600))
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func (g corpusGen) fw() string {
	if g.r.IntN(2) == 0 {
		return "lexile"
	}
	return "quantile"
}

// results are 0/1 results for n items: mostly mixed, sometimes all right or all wrong.
func (g corpusGen) results(n int) []int {
	p := g.r.Float64()
	switch g.r.IntN(10) {
	case 0:
		p = 0
	case 1:
		p = 1
	}
	out := make([]int, n)
	for i := range out {
		if g.r.Float64() < p {
			out[i] = 1
		}
	}
	return out
}

func (g corpusGen) itemResults(ids []string, results []int, key string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf(`{%q:%q,"result":%d}`, key, id, results[i])
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (g corpusGen) itemIDs(ids []string, key string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf(`{%q:%q}`, key, id)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (g corpusGen) idKey() string {
	if g.r.IntN(10) == 0 {
		return "itemid" // the JSON front's alias: not readable by protojson, so JSON only
	}
	return "id"
}

func (g corpusGen) prior() string {
	ability := -300 + g.r.Float64()*2000
	if g.r.IntN(2) == 0 {
		ability = float64(int(ability))
	}
	return fmt.Sprintf(`"priorAbility":%v,"priorUncertainty":%v,"elapsedDays":%v`, ability, 20+g.r.IntN(200), g.r.IntN(400))
}

func (g corpusGen) gradeTime() (int, string) {
	return g.r.IntN(13), []string{"BOY", "MOY", "EOY"}[g.r.IntN(3)]
}

// optional is s with probability 1/k, else "".
func (g corpusGen) optional(k int, s string) string {
	if g.r.IntN(k) == 0 {
		return s
	}
	return ""
}

func (g corpusGen) graded() string {
	gr, toy := g.gradeTime()
	return g.optional(4, fmt.Sprintf(`,"grade":%d,"timeOfYear":%q`, gr, toy))
}

func (g corpusGen) frameworkField(fw string) string {
	return g.optional(4, fmt.Sprintf(`,"framework":%q`, []string{fw, strings.ToUpper(fw[:1]) + fw[1:]}[g.r.IntN(2)]))
}

// resultsBody is an item-result request's items, with one of the item problems partial credit
// leaves as they were now and then (a result of 2, 7 or -1, a missing one, an unknown or
// repeated id).
func (g corpusGen) resultsBody(fw string) string {
	ids := g.ids(fw, 1+g.r.IntN(40))
	res := g.results(len(ids))
	body := g.itemResults(ids, res, g.idKey())
	if g.r.IntN(8) == 0 {
		i := g.r.IntN(len(ids))
		switch g.r.IntN(5) {
		case 0:
			body = strings.Replace(body, fmt.Sprintf(`"result":%d}`, res[i]), fmt.Sprintf(`"result":%d}`, []int{2, 7, -1}[g.r.IntN(3)]), 1)
		case 1:
			body = strings.Replace(body, fmt.Sprintf(`,"result":%d}`, res[i]), `}`, 1)
		case 2:
			body = strings.Replace(body, ids[i], "L999999", 1)
		case 3:
			body = strings.Replace(body, `]`, fmt.Sprintf(`,{"id":%q,"result":1}]`, ids[0]), 1)
		case 4:
			other := "quantile"
			if fw == "quantile" {
				other = "lexile"
			}
			body = strings.Replace(body, `]`, fmt.Sprintf(`,{"id":%q,"result":0}]`, g.ids(other, 1)[0]), 1)
		}
	}
	return body
}

// numberCorrect is a number correct for n items: mostly 0 … n, now and then n+1 or -1.
func (g corpusGen) numberCorrect(n int) int {
	switch g.r.IntN(12) {
	case 0:
		return n + 1 + g.r.IntN(3)
	case 1:
		return -1
	case 2:
		return n
	case 3:
		return 0
	}
	return g.r.IntN(n + 1)
}

// dichotomousCorpus is n requests on each scoring path, of dichotomous demo items only.
func dichotomousCorpus(seed uint64, n int) []servetest.Request {
	g := corpusGen{rand.New(rand.NewPCG(seed, 28))}
	var out []servetest.Request
	add := func(path, body string) {
		out = append(out, servetest.Request{Path: path, Body: []byte(body)})
	}
	forms := map[string]int{"FORM-READ-G3": 30, "FORM-READ-G8": 30, "FORM-MATH-G2": 25, "FORM-MATH-G5": 30}
	formIDs := []string{"FORM-READ-G3", "FORM-READ-G8", "FORM-MATH-G2", "FORM-MATH-G5"}
	links := []string{"STATE-READ-2026", "STATE-MATH-2026", "NATL-READ-PT", "NATL-MATH-PT"}
	scale := func() string {
		link := links[g.r.IntN(len(links))]
		lo, hi := 200, 800
		if strings.HasPrefix(link, "NATL") {
			lo, hi = 100, 300
		}
		score := lo + g.r.IntN(hi-lo+1)
		if g.r.IntN(15) == 0 {
			score = hi + 1 + g.r.IntN(50)
		}
		ss := fmt.Sprintf("%q", strconv.Itoa(score))
		if g.r.IntN(4) == 0 {
			ss = strconv.Itoa(score)
		}
		if g.r.IntN(3) == 0 {
			ss = fmt.Sprintf("%q", fmt.Sprintf("%d.5", score-1))
		}
		return fmt.Sprintf(`"linkId":%q,"scaleScore":%s,"scaleSem":%v`, link, ss, 5+g.r.IntN(40))
	}
	for range n {
		fw := g.fw()
		add("/api/score/items/idsWithResults/standard", fmt.Sprintf(`{"items":%s%s%s%s}`, g.resultsBody(fw), g.frameworkField(fw), g.optional(4, `,"fit":true`), g.graded()))

		ids := g.ids(fw, 1+g.r.IntN(40))
		add("/api/score/items/ids/standard", fmt.Sprintf(`{"items":%s,"numberCorrect":%d%s%s}`, g.itemIDs(ids, g.idKey()), g.numberCorrect(len(ids)), g.frameworkField(fw), g.graded()))

		add("/api/score/scale/standard", fmt.Sprintf(`{%s%s}`, scale(), g.graded()))

		gr, toy := g.gradeTime()
		add("/api/score/items/idsWithResults/standard/strands", fmt.Sprintf(`{"grade":%d,"timeOfYear":%q,"items":%s%s%s}`, gr, toy, g.resultsBody(fw), g.frameworkField(fw), g.optional(4, `,"fit":true`)))

		entries := make([]string, 1+g.r.IntN(12))
		total := 0
		for i := range entries {
			d := fmt.Sprintf("%d", -500+g.r.IntN(2300))
			if g.r.IntN(3) == 0 {
				d = fmt.Sprintf("%.1f", -500+g.r.Float64()*2300)
			}
			count := 1
			switch g.r.IntN(3) {
			case 0:
				entries[i] = fmt.Sprintf(`{"difficulty":%s}`, d)
			default:
				count = 1 + g.r.IntN(10)
				if g.r.IntN(30) == 0 {
					count = 0
				}
				entries[i] = fmt.Sprintf(`{"difficulty":%s,"count":%d}`, d, count)
			}
			if g.r.IntN(40) == 0 {
				entries[i] = `{"difficulty":20000}`
			}
			total += count
		}
		add("/api/score/items/difficulties/bayes", fmt.Sprintf(`{"items":[%s],"numberCorrect":%d,"framework":%q,%s%s}`, strings.Join(entries, ","), g.numberCorrect(total), fw, g.prior(), g.graded()))

		add("/api/score/items/idsWithResults/bayes", fmt.Sprintf(`{%s,"items":%s%s%s%s}`, g.prior(), g.resultsBody(fw), g.frameworkField(fw), g.optional(4, `,"fit":true`), g.graded()))

		ids = g.ids(fw, 1+g.r.IntN(40))
		add("/api/score/items/ids/bayes", fmt.Sprintf(`{"items":%s,"numberCorrect":%d,%s%s%s}`, g.itemIDs(ids, "id"), g.numberCorrect(len(ids)), g.prior(), g.frameworkField(fw), g.graded()))

		add("/api/score/scale/bayes", fmt.Sprintf(`{%s,%s%s}`, scale(), g.prior(), g.graded()))

		gr, toy = g.gradeTime()
		add("/api/score/items/idsWithResults/bayes/strands", fmt.Sprintf(`{%s,"grade":%d,"timeOfYear":%q,"items":%s%s%s}`, g.prior(), gr, toy, g.resultsBody(fw), g.frameworkField(fw), g.optional(4, `,"fit":true`)))

		form := formIDs[g.r.IntN(len(formIDs))]
		if g.r.IntN(30) == 0 {
			form = "FORM-NOPE"
		}
		add("/api/score/form/id/standard", fmt.Sprintf(`{"formId":%q,"numberCorrect":%d%s}`, form, g.numberCorrect(forms[form]), g.graded()))

		add("/api/score/adaptive/next", g.adaptive(fw))
	}
	return out
}

// adaptive is an adaptive request on a pool of dichotomous items.
func (g corpusGen) adaptive(fw string) string {
	pool := g.ids(fw, 10+g.r.IntN(60))
	answered := g.r.IntN(min(len(pool), 15))
	res := g.results(answered)
	var b strings.Builder
	fmt.Fprintf(&b, `{"framework":%q,"items":%s,"pool":["%s"]`, fw, g.itemResults(pool[:answered], res, "id"), strings.Join(pool, `","`))
	switch g.r.IntN(3) {
	case 0:
		b.WriteString("," + g.prior())
	case 1:
		gr, toy := g.gradeTime()
		fmt.Fprintf(&b, `,"grade":%d,"timeOfYear":%q`, gr, toy)
	}
	if answered < len(pool)-2 && g.r.IntN(4) == 0 {
		fmt.Fprintf(&b, `,"exclude":[%q]`, pool[answered+1])
	}
	if k := g.r.IntN(4); k > 0 {
		fmt.Fprintf(&b, `,"randomesque":%d,"seed":%d`, k, int32(g.r.Uint32()))
	}
	b.WriteString(g.optional(4, fmt.Sprintf(`,"targetSuccess":%.2f`, 0.05+g.r.Float64()*0.9)))
	if g.r.IntN(4) == 0 {
		strands := corpusStrands[fw]
		a, c := strands[g.r.IntN(len(strands))], strands[g.r.IntN(len(strands))]
		if a == c {
			fmt.Fprintf(&b, `,"strands":{%q:1}`, a)
		} else {
			fmt.Fprintf(&b, `,"strands":{%q:2,%q:1}`, a, c)
		}
	}
	var stop []string
	if g.r.IntN(2) == 0 {
		stop = append(stop, fmt.Sprintf(`"maxItems":%d`, 1+g.r.IntN(20)))
	}
	if g.r.IntN(3) == 0 {
		stop = append(stop, fmt.Sprintf(`"targetUncertainty":%d`, 40+g.r.IntN(100)))
	}
	if g.r.IntN(4) == 0 {
		stop = append(stop, fmt.Sprintf(`"cut":%d,"confidence":0.9`, 200+g.r.IntN(1000)))
	}
	if len(stop) > 0 {
		fmt.Fprintf(&b, `,"stop":{%s}`, strings.Join(stop, ","))
	}
	b.WriteString("}")
	body := b.String()
	if answered > 0 && g.r.IntN(12) == 0 {
		body = strings.Replace(body, fmt.Sprintf(`"result":%d}`, res[0]), `"result":3}`, 1)
	}
	return body
}
