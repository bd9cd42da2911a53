package grpcguard

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestRefusalsDoNotFloodTheLog: 300 calls without a token within a second are all counted, but
// only the burst and a few a second are logged; answered calls are all logged.
func TestRefusalsDoNotFloodTheLog(t *testing.T) {
	t.Parallel()
	h := startGuard(t)
	for range 3 { // 100 a connection: more would have it closed (conn.go)
		score := scoringv1.NewScoringServiceClient(h.dial(t))
		for range 100 {
			if _, err := score.ScoreItemResults(context.Background(), scoreOfSize(t, 100)); status.Code(err) != codes.Unauthenticated {
				t.Fatalf("got %v; want Unauthenticated", err)
			}
		}
	}
	score := scoringv1.NewScoringServiceClient(h.conn)
	if got := h.count(scoreMethod, "Unauthenticated"); got != 300 {
		t.Errorf("refusals counted: got %v; want 300", got)
	}
	authed := bearer("Bearer " + h.token)
	for range 30 {
		if _, err := score.ScoreItemResults(authed, scoreOfSize(t, 100)); status.Code(err) == codes.Unauthenticated {
			t.Fatal(err)
		}
	}
	var refused, answered int
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if !strings.Contains(line, `"route":"`+scoreMethod+`"`) {
			continue
		}
		if strings.Contains(line, `"code":"Unauthenticated"`) {
			refused++
		} else {
			answered++
		}
	}
	if refused < 20 || refused > 40 {
		t.Errorf("refusals logged: got %d of 300; want the burst of 20 and 5 a second (at most 40 in a few seconds)", refused)
	}
	if answered != 30 {
		t.Errorf("answered calls logged: got %d; want all 30", answered)
	}
}
