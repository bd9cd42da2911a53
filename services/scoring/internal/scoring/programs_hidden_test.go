package scoring

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// hiddenTemplates are requests naming one item (ID, of framework FW) on every path that takes an
// item id, a form or a link.
var hiddenTemplates = map[string][]servetest.Request{
	"item": {
		{Path: "/api/score/items/idsWithResults/standard", Body: []byte(`{"items":[{"id":"ID","result":1}]}`)},
		{Path: "/api/score/items/idsWithResults/standard", Body: []byte(`{"items":[{"id":"VISIBLE","result":1},{"id":"ID","result":2}],"framework":"FW"}`)},
		{Path: "/api/score/items/ids/standard", Body: []byte(`{"items":[{"id":"VISIBLE"},{"id":"ID"}],"numberCorrect":2}`)},
		{Path: "/api/score/items/ids/bayes", Body: []byte(`{"items":[{"id":"ID"}],"numberCorrect":1,"priorAbility":500,"priorUncertainty":200,"elapsedDays":0}`)},
		{Path: "/api/score/items/idsWithResults/bayes", Body: []byte(`{"items":[{"id":"ID","result":1}],"priorAbility":500,"priorUncertainty":200,"elapsedDays":30}`)},
		{Path: "/api/score/items/idsWithResults/standard/strands", Body: []byte(`{"items":[{"id":"ID","result":1},{"id":"VISIBLE","result":0}],"grade":3,"timeOfYear":"MOY"}`)},
		{Path: "/api/score/items/idsWithResults/bayes/strands", Body: []byte(`{"items":[{"id":"ID","result":1}],"grade":3,"timeOfYear":"MOY","priorAbility":500,"priorUncertainty":100,"elapsedDays":0}`)},
		{Path: "/api/score/adaptive/next", Body: []byte(`{"framework":"FW","items":[{"id":"ID","result":1}]}`)},
		{Path: "/api/score/adaptive/next", Body: []byte(`{"framework":"FW","items":[],"pool":["ID","VISIBLE"]}`)},
		{Path: "/api/score/adaptive/next", Body: []byte(`{"framework":"FW","items":[],"exclude":["ID"]}`)},
		{Path: "/api/content/items", Body: []byte(`{"framework":"FW","ids":["ID","VISIBLE"]}`)},
	},
	"form": {
		{Path: "/api/score/form/id/standard", Body: []byte(`{"formId":"ID","numberCorrect":1}`)},
		{Path: "/api/score/form/id/standard", Body: []byte(`{"formId":"ID","numberCorrect":1,"grade":3,"timeOfYear":"MOY"}`)},
	},
	"link": {
		{Path: "/api/score/scale/standard", Body: []byte(`{"linkId":"ID","scaleScore":"500","scaleSem":20}`)},
		{Path: "/api/score/scale/bayes", Body: []byte(`{"linkId":"ID","scaleScore":"500","scaleSem":20,"priorAbility":500,"priorUncertainty":100,"elapsedDays":0}`)},
	},
}

// TestHiddenAsNeverExisting: on one deployment, every request naming another program's item
// (dichotomous and partial credit, of each framework), form or link is answered, on the JSON
// front, in an NDJSON batch and over gRPC, byte for byte as the same request naming an id that
// never existed (the id itself aside).
func TestHiddenAsNeverExisting(t *testing.T) {
	t.Parallel()
	pc := servetest.Programs(t)
	full, _, secrets := startTenants(t, pc.Dir)
	b, err := measure.LoadDir(pc.Dir)
	if err != nil {
		t.Fatal(err)
	}
	tok := full.Login("acme", secrets["acme"])
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	type hidden struct{ kind, id, never, fw, visible string }
	var cases []hidden
	firsts := map[string]bool{}
	for _, id := range pc.Hidden(servetest.ProgramA) {
		if it, ok := b.Item(id); ok {
			kind := it.Framework + map[bool]string{true: " partial credit", false: ""}[it.Polytomous()]
			if !firsts[kind] {
				firsts[kind] = true
				visible := map[string]string{"lexile": "L000001", "quantile": "Q000001"}[it.Framework]
				cases = append(cases, hidden{"item", id, id[:1] + "9" + id[2:], it.Framework, visible})
			}
			continue
		}
		kind := "link"
		if strings.HasPrefix(id, "FORM-") {
			kind = "form"
		}
		cases = append(cases, hidden{kind, id, id[:len(id)-2] + "XX", "", ""}) // the same length: the same Content-Length
	}
	if len(cases) != 6 {
		t.Fatalf("hidden cases %+v; want 4 kinds of item, a form and a link", cases)
	}
	for _, c := range cases {
		if _, known := pc.Owner[c.never]; known {
			t.Fatalf("%s: the never-existing id %s exists", c.id, c.never)
		}
		for _, tmpl := range hiddenTemplates[c.kind] {
			fill := func(id string) []byte {
				r := strings.NewReplacer("VISIBLE", c.visible, "FW", c.fw, "ID", id)
				return []byte(r.Replace(string(tmpl.Body)))
			}
			hid, never := fill(c.id), fill(c.never)
			// JSON front.
			got := answerText(post(full, tok, tmpl.Path, hid))
			want := strings.ReplaceAll(answerText(post(full, tok, tmpl.Path, never)), c.never, c.id)
			if got != want {
				t.Errorf("%s %s:\nhidden %s\nnever  %s", tmpl.Path, hid, got, want)
			}
			// NDJSON batch: a record of each.
			batch := func(body []byte) string {
				rec, _ := json.Marshal(map[string]any{"id": "r", "path": tmpl.Path, "body": json.RawMessage(body)})
				r := full.Do(http.MethodPost, "/api/score/batch", "application/x-ndjson", string(rec)+"\n", "Authorization", "Bearer "+tok)
				return answerText(r)
			}
			if strings.HasPrefix(tmpl.Path, "/api/score/") {
				if got, want := batch(hid), strings.ReplaceAll(batch(never), c.never, c.id); got != want {
					t.Errorf("batch %s %s:\nhidden %s\nnever  %s", tmpl.Path, hid, got, want)
				}
			}
			// gRPC.
			recs := servetest.GRPCRecords(t, []servetest.Request{{Path: tmpl.Path, Body: hid}, {Path: tmpl.Path, Body: never}})
			if len(recs) != 2 {
				t.Fatalf("%s: %d gRPC records; want 2", tmpl.Path, len(recs))
			}
			gh, gErr := full.UnaryGRPC(ctx, recs[0])
			gn, nErr := full.UnaryGRPC(ctx, recs[1])
			if (gErr == nil) != (nErr == nil) || (gErr != nil && strings.ReplaceAll(statusString(nErr), c.never, c.id) != statusString(gErr)) ||
				(gErr == nil && !sameAnswer(gh, nil, gn, nil)) {
				t.Errorf("gRPC %s %s:\nhidden %v %v\nnever  %v %v", tmpl.Path, hid, gh, gErr, gn, nErr)
			}
		}
	}
}

// statusString is a status error as text: code, message and details, for comparing two errors
// that differ only in an id they name.
func statusString(err error) string {
	var b bytes.Buffer
	st := status.Convert(err)
	b.WriteString(st.Code().String() + ": " + st.Message())
	for _, d := range st.Proto().GetDetails() {
		m, uerr := d.UnmarshalNew()
		if uerr != nil {
			b.WriteString("\n" + uerr.Error())
			continue
		}
		// protojson's spacing varies by design: a round trip through encoding/json fixes it.
		js, _ := protojson.Marshal(m)
		var v any
		_ = json.Unmarshal(js, &v)
		fixed, _ := json.Marshal(v)
		b.WriteString("\n" + d.GetTypeUrl() + " ")
		b.Write(fixed)
	}
	return b.String()
}
