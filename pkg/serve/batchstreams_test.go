package serve

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/token"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// echoGroup is a group stream that answers each student line with itself and the group with
// the count: enough to see who may open one.
func echoGroup(context.Context, []byte) (GroupStream, error) { return &echoStream{}, nil }

type echoStream struct{ n int }

func (e *echoStream) Entry(_ context.Context, line []byte) ([]byte, error) {
	e.n++
	return line, nil
}

func (e *echoStream) Group(context.Context) ([]byte, error) { return []byte(strconv.Itoa(e.n)), nil }

// TestGroupStreamPermissions: a group stream takes forecast:batch and forecast:group.
func TestGroupStreamPermissions(t *testing.T) {
	t.Parallel()
	hash, err := token.HashSecret(clientSecret)
	if err != nil {
		t.Fatal(err)
	}
	clients := filepath.Join(t.TempDir(), "clients.yaml")
	entry := func(id, perms string) string {
		return "  - clientId: " + id + "\n    secretHash: " + hash + "\n    services: [forecast]\n    permissions: [" + perms + "]\n"
	}
	yaml := "clients:\n" + entry("both", `"forecast:batch", "forecast:group"`) + entry("batch-only", `"forecast:batch"`) +
		entry("group-only", `"forecast:group"`) + entry("all", `"*"`)
	if err := os.WriteFile(clients, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := forecastConfig(t)
	cfg.ClientsFile = clients
	svc := contractService(t, "forecast")
	svc.BatchPath, svc.BatchRPC = "/api/forecast/batch", forecastv1.ForecastService_ForecastBatch_FullMethodName
	svc.GroupStreams = map[string]OpenGroup{"/api/forecast/reading/group/stream": echoGroup}
	h := startService(t, cfg, svc)
	body := "{}\n[1,2,3]\n"
	for _, tc := range []struct {
		client string
		status int
		wantIn string
	}{
		{"both", 200, "[1,2,3]\n{\"group\":1}\n"},
		{"all", 200, "[1,2,3]\n{\"group\":1}\n"},
		{"batch-only", 403, `\"forecast:group\"`},
		{"group-only", 403, `\"forecast:batch\"`},
	} {
		t.Run(tc.client, func(t *testing.T) {
			r := h.do(http.MethodPost, "/api/forecast/reading/group/stream", ndjson, body, "Authorization", "Bearer "+h.token(tc.client, clientSecret))
			if r.status != tc.status || !strings.Contains(string(r.body), tc.wantIn) {
				t.Errorf("got %d %s; want %d with %s", r.status, r.body, tc.status, tc.wantIn)
			}
		})
	}
	// The math stream is not served by this service: the gateway's 404.
	if r := h.do(http.MethodPost, "/api/forecast/math/group/stream", ndjson, body, "Authorization", "Bearer "+h.token("all", clientSecret)); r.status != 404 {
		t.Errorf("a stream the service does not open: %d %s", r.status, r.body)
	}
}

// TestStreamPermissionsFromContract: a stream takes its gRPC form's rule, so a service whose
// streams have none in the contract is refused at start.
func TestStreamPermissionsFromContract(t *testing.T) {
	t.Parallel()
	cfg := forecastConfig(t)
	scoring := scoringv1.ScoringService_ScoreBatch_FullMethodName
	for _, tc := range []struct {
		name      string
		batchPath string
		batchRPC  string
		groups    bool
	}{
		{"a batch path without its batch rpc", "/api/forecast/batch", "", false},
		{"a batch rpc the service does not serve", "/api/forecast/batch", scoring, false},
		{"group streams without a batch rpc", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc := contractService(t, "forecast")
			svc.BatchPath, svc.BatchRPC = tc.batchPath, tc.batchRPC
			if tc.groups {
				svc.GroupStreams = map[string]OpenGroup{"/api/forecast/reading/group/stream": echoGroup}
			}
			if _, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler), svc); err == nil || !strings.Contains(err.Error(), "streams:") {
				t.Errorf("got %v; want the streams refused", err)
			}
		})
	}
}
