package scoring

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// TestProgramsPaging: the catalog pages a client through exactly what it sees, and a page token
// is good only for a client seeing the same programs: another client's is refused as a forged
// one is.
func TestProgramsPaging(t *testing.T) {
	t.Parallel()
	pc := servetest.Programs(t)
	full, _, secrets := startTenants(t, pc.Dir)
	b, err := measure.LoadDir(pc.Dir)
	if err != nil {
		t.Fatal(err)
	}
	type page struct {
		Items         []struct{ ID string }
		NextPageToken string
	}
	list := func(tok, body string) (servetest.Response, page) {
		r := post(full, tok, "/api/content/items", []byte(body))
		var p page
		if r.Status == http.StatusOK {
			if err := json.Unmarshal(r.Body, &p); err != nil {
				t.Fatal(err)
			}
		}
		return r, p
	}
	toks := map[string]string{}
	for _, tn := range tenants {
		toks[tn.id] = full.Login(tn.id, secrets[tn.id])
		var want []string
		for _, it := range b.Items(measure.ItemQuery{Framework: "lexile", Limit: 1 << 20}).Items {
			if p := pc.Owner[it.ID]; p == "" || slices.Contains(tn.sees, p) {
				want = append(want, it.ID)
			}
		}
		var got []string
		next := ""
		for pages := 0; pages < 100; pages++ {
			r, p := list(toks[tn.id], fmt.Sprintf(`{"framework":"lexile","pageSize":300,"pageToken":%q}`, next))
			if r.Status != http.StatusOK {
				t.Fatalf("%s: page %d: got %d %s", tn.id, pages, r.Status, r.Body)
			}
			for _, it := range p.Items {
				got = append(got, it.ID)
			}
			if next = p.NextPageToken; next == "" {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: paged through %d items; want its %d visible lexile items in id order", tn.id, len(got), len(want))
		}
	}
	_, first := list(toks["acme"], `{"framework":"lexile","pageSize":3}`)
	if first.NextPageToken == "" {
		t.Fatal("acme's first page of 3 has no next page token")
	}
	forged := []byte(first.NextPageToken)
	forged[len(forged)/2] ^= 1
	for _, other := range []string{"beta", "plain", "both", "ops"} {
		r, _ := list(toks[other], fmt.Sprintf(`{"framework":"lexile","pageSize":3,"pageToken":%q}`, first.NextPageToken))
		f, _ := list(toks[other], fmt.Sprintf(`{"framework":"lexile","pageSize":3,"pageToken":%q}`, forged))
		if r.Status != http.StatusBadRequest || answerText(r) != answerText(f) {
			t.Errorf("%s with acme's page token: got %s; want the forged token's answer %s", other, answerText(r), answerText(f))
		}
	}
	if r, _ := list(toks["acme"], fmt.Sprintf(`{"framework":"lexile","pageSize":3,"pageToken":%q}`, first.NextPageToken)); r.Status != http.StatusOK {
		t.Errorf("acme with its own page token: got %d %s; want 200", r.Status, r.Body)
	}
}

// window is a span of time in which a reload may have changed what a client sees: before it,
// seen was the old value; after it, the new.
type window struct {
	from, to time.Time
	seen     bool // after the window
}

// observation is one answer under load: when the request was sent and its answer read, and
// whether the answer showed the moving items.
type observation struct {
	what       string
	sent, read time.Time
	seen       bool
}

// possible reports whether the moving items could be seen (or not, as seen says) at some instant
// between sent and read, given the reload windows in order and what was seen before the first.
func possible(windows []window, initial bool, sent, read time.Time, seen bool) bool {
	state := initial
	cursor := time.Time{}
	for _, w := range windows {
		if state == seen && cursor.Before(read) && w.from.After(sent) { // a steady span before w overlaps
			return true
		}
		if (state == seen || w.seen == seen) && !w.from.After(read) && !w.to.Before(sent) { // w itself overlaps
			return true
		}
		state, cursor = w.seen, w.to
	}
	return state == seen && cursor.Before(read)
}

var itemRow = regexp.MustCompile(`(?m)^(L00000[15],lexile,[^,\n]*,[^,\n]*,[^,\n]*),[a-z]*$`)

// TestProgramsReloadUnderLoad: while clients score and list two items, reloads move the items
// between programs and the client between programs. Every answer shows either both items or
// neither (no request mixes two bundles or two clients files), and each is what the client could
// see at some instant between sending the request and reading its answer: a change applies from
// the next request, and nothing hidden at a request's start is used.
func TestProgramsReloadUnderLoad(t *testing.T) {
	t.Parallel()
	pc := servetest.Programs(t)
	for _, id := range []string{"L000001", "L000005"} {
		if pc.Owner[id] != "" {
			t.Fatalf("%s is of program %q; the test moves shared items", id, pc.Owner[id])
		}
	}
	full, clients, secrets := startTenants(t, pc.Dir)
	tok := full.Login("acme", secrets["acme"])
	items := filepath.Join(pc.Dir, "items.csv")
	original, err := os.ReadFile(items)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(itemRow.FindAll(original, -1)); n != 2 {
		t.Fatalf("%d rows of the moving items in items.csv; want 2", n)
	}
	itemsTo := func(program string) {
		if err := os.WriteFile(items, itemRow.ReplaceAll(original, []byte("$1,"+program)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clientTo := func(program string) { tenantsFile(t, clients, secrets, map[string]string{"acme": "[" + program + "]"}) }
	itemsTo("acme")
	full.Frame.Reload()

	var (
		mu   sync.Mutex
		obs  []observation
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	score := scoringv1.NewScoringServiceClient(full.Conn)
	asks := []func() (string, bool, bool){ // what, seen, consistent
		func() (string, bool, bool) {
			r := post(full, tok, "/api/score/items/idsWithResults/standard", []byte(`{"items":[{"id":"L000001","result":1},{"id":"L000005","result":0}]}`))
			unknown := strings.Count(string(r.Body), "unknown item id")
			return "json score " + string(r.Body), r.Status == http.StatusOK, (r.Status == http.StatusOK && unknown == 0) || (r.Status == http.StatusBadRequest && unknown == 2)
		},
		func() (string, bool, bool) {
			r := post(full, tok, "/api/content/items", []byte(`{"framework":"lexile","ids":["L000001","L000005"]}`))
			n := strings.Count(string(r.Body), `"id":"L00000`)
			return "json catalog " + string(r.Body), n == 2, r.Status == http.StatusOK && (n == 0 || n == 2)
		},
		func() (string, bool, bool) {
			_, err := score.ScoreItemResults(ctx, &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{
				{Id: ptr("L000001"), Result: ptr(int32(1))}, {Id: ptr("L000005"), Result: ptr(int32(0))}}})
			if err == nil {
				return "grpc score", true, true
			}
			text := statusString(err)
			return "grpc score " + text, false, strings.Count(text, "unknown item id") == 2
		},
	}
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := g; ; k++ {
				select {
				case <-done:
					return
				default:
				}
				sent := time.Now()
				what, seen, ok := asks[k%len(asks)]()
				o := observation{what: what, sent: sent, read: time.Now(), seen: seen}
				if !ok {
					t.Errorf("an answer mixing what the client sees: %s", what)
				}
				mu.Lock()
				obs = append(obs, o)
				mu.Unlock()
			}
		}()
	}
	// Visible (items and client acme's); each step moves one of them, which flips what is seen.
	var windows []window
	item, client := "acme", "acme"
	answered := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(obs)
	}
	for step := range 24 {
		// Each state serves a few answers, however slow the machine, before the next reload.
		for n, deadline := answered(), time.Now().Add(5*time.Second); answered() < n+6 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		from := time.Now()
		if step%2 == 0 {
			item = map[string]string{"acme": "beta", "beta": "acme"}[item]
			itemsTo(item)
		} else {
			client = map[string]string{"acme": "beta", "beta": "acme"}[client]
			clientTo(client)
		}
		full.Frame.Reload()
		windows = append(windows, window{from: from, to: time.Now(), seen: item == client})
	}
	time.Sleep(10 * time.Millisecond)
	close(done)
	wg.Wait()
	counts := map[bool]int{}
	for _, o := range obs {
		counts[o.seen]++
		if !possible(windows, true, o.sent, o.read, o.seen) {
			t.Errorf("%s: seen %v between %s and %s, which the reloads never allowed", o.what, o.seen,
				o.sent.Format("15:04:05.000000"), o.read.Format("15:04:05.000000"))
		}
	}
	t.Logf("%d answers: %d showing the items, %d not", len(obs), counts[true], counts[false])
	if counts[true] < 10 || counts[false] < 10 {
		t.Errorf("answers showing the items %d, not %d; want at least 10 of each", counts[true], counts[false])
	}
}

// TestPossible pins the timeline check the reload test relies on.
func TestPossible(t *testing.T) {
	t.Parallel()
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	windows := []window{{at(10), at(12), false}, {at(20), at(22), true}}
	tests := []struct {
		sent, read int
		seen, want bool
	}{
		{0, 5, true, true}, {0, 5, false, false}, // before the first reload: seen
		{13, 19, false, true}, {13, 19, true, false}, // between the reloads: hidden
		{11, 11, true, true}, {11, 11, false, true}, // within a reload: either
		{5, 15, true, true}, {5, 15, false, true}, // across one: either
		{23, 30, true, true}, {23, 30, false, false}, // after the last: seen
		{12, 20, true, true}, // touching both windows' edges: either
	}
	for _, tt := range tests {
		if got := possible(windows, true, at(tt.sent), at(tt.read), tt.seen); got != tt.want {
			t.Errorf("seen %v over %d–%d ms: got %v; want %v", tt.seen, tt.sent, tt.read, got, tt.want)
		}
	}
}
