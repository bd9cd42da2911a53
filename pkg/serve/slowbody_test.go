package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

// TestSlowUploadsHoldTheirBytes: a client's group calls that declare large bodies and send
// them slowly hold their declared bytes in the body pool, and nothing of the budget, while they
// arrive; the client's bodies in flight hold at most its share of the pool (a quarter of it:
// three of 600,000 bytes fit 2 MiB, a fourth is 503 after the read wait), and another client's
// group call is admitted and answered meanwhile. Once, each slow upload took its whole
// estimated cost (16 × its declared size, or a student per 8 bytes) from the budget before its
// first byte, and three of them held 528 of a 537 MB budget while every other client's group
// forecast was 503. (The pool's shares alone: internal/admission's TestBodyPoolShare; only a
// whole server shows the JSON front holding a body's bytes off a real connection by its token's
// client, and answering the refusal before the body comes.)
func TestSlowUploadsHoldTheirBytes(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MemoryBudget = 32 << 20               // a body pool of 8 MiB: 2 MiB a client without a concurrency limit
	limitsOf(cfg).MaxGroupBodyBytes = 4 << 20 // under the pool's quarter of the budget
	hash, err := token.HashSecret(clientSecret)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientsFile = filepath.Join(t.TempDir(), "clients.yaml")
	yaml := "clients:\n  - clientId: slow\n    secretHash: " + hash + "\n    services: [scoring]\n    permissions: [\"*\"]\n"
	if err := os.WriteFile(cfg.ClientsFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startTestGroup(t, cfg)
	slowTok := h.token("slow", clientSecret)
	const declared = 600_000
	// upload sends a group call's head, declaring its body, and the body's first bytes, then
	// nothing; the answer, when one comes, is sent on the channel.
	upload := func() chan response {
		c, err := net.Dial("tcp", strings.TrimPrefix(h.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		head := fmt.Sprintf("POST "+throwawayGroupPath+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
			"Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", slowTok, declared)
		first := `{"text":"x","items":[`
		if _, err := io.WriteString(c, head+first); err != nil {
			t.Fatal(err)
		}
		answered := make(chan response, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return // closed at the test's end
			}
			// The head alone: a refused body's answer ends once the server has read the rest of
			// the body, which this caller never sends.
			answered <- response{status: resp.StatusCode, header: resp.Header}
		}()
		return answered
	}
	for i := range 3 {
		upload()
		waitFor(t, "slow upload "+strconv.Itoa(i+1)+" in the body pool", func() bool { return bodiesHeld(t, h) == int64(i+1)*declared })
	}
	if got := admitted(t, h); got != 0 {
		t.Errorf("budget held by three slow uploads: got %d; want 0 (their bytes are in the body pool)", got)
	}
	demo := h.token("demo", "demo-secret")
	group := echoGroupBody("x", 2000)
	start := time.Now()
	r, err := post(h.base, throwawayGroupPath, demo, bytes.NewReader(group))
	if err != nil || r.status != http.StatusOK || time.Since(start) > time.Second {
		t.Errorf("another client's %d-byte group call beside the slow uploads: got %d %s %v after %s; want 200 at once",
			len(group), r.status, r.body, err, time.Since(start))
	}
	fourth := upload() // past the client's share: 2.4 MB of its 2 MiB
	start = time.Now()
	select {
	case r := <-fourth: // answered as it is refused, though it sends nothing more
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the fourth slow upload's 503 came after %s; want it after the 1 s read wait, not the body's 10 s grace", took)
		}
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
			t.Errorf("a fourth slow upload of the client: got %d %s; want 503 with Retry-After 1", r.status, r.body)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("a fourth slow upload past the client's share was not refused after the read wait")
	}
	if got := bodiesHeld(t, h); got != 3*declared { // the other client's body long read
		t.Errorf("held by the slow client after the refusal: %d; want its three bodies, %d", got, 3*declared)
	}
	wantRefusals(t, h, "http", 0) // none for the budget
	if _, v := sample(t, scrape(t, h), "yardstick_admission_refusals_total", `cause="read_pool".*front="http"`); v != 1 {
		t.Errorf("read_pool refusals of http: got %v; want 1", v)
	}
}
