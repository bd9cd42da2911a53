package grpcguard

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/authz"
	"github.com/yardstick-dev/yardstick/pkg/token"
)

// readsHeld is what the calls being read hold of the read pool, all clients together, as the
// series yardstick_read_pool_in_use_bytes{front="grpc"} says (a client's own holding is no series:
// one per client would be too many).
func (h *harness) readsHeld(t *testing.T) float64 {
	t.Helper()
	families, err := h.g.Telemetry.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "yardstick_read_pool_in_use_bytes" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "front" && l.GetValue() == "grpc" {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatal(`no series yardstick_read_pool_in_use_bytes{front="grpc"}`)
	return 0
}

// twoClients has g authorize a clients file's client, "other" (every permission), beside the dev
// mode's demo, with a key of their own, and returns demo's token and other's. Before g serves.
func twoClients(t *testing.T, g *Guard) (demo, other string) {
	t.Helper()
	secret, hash, err := token.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	clients := filepath.Join(t.TempDir(), "clients.yaml")
	yaml := "clients:\n  - clientId: other\n    secretHash: " + hash + "\n    services: [forecast]\n    permissions: [\"*\"]\n"
	if err := os.WriteFile(clients, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	issuer, err := token.New(token.Options{Dev: true, ClientsFile: clients, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tokens := make([]string, 2)
	for i, c := range [][2]string{{token.DevClientID, token.DevClientSecret}, {"other", secret}} {
		tok, err := issuer.Authenticate(c[0], c[1], token.ServiceForecast, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		tokens[i] = tok.AccessToken
	}
	g.Gate.Authz = authz.New(issuer, token.ServiceForecast, slog.New(slog.DiscardHandler), nil)
	return tokens[0], tokens[1]
}
