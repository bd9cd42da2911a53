package routes

import (
	"testing"

	"google.golang.org/grpc"

	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// TestTableOfTheContract: the table of a server of both contracts' services and the token
// service, built from the contract: one entry per rpc served, found by path and by method alike,
// with its rule, group flag and both limits; a route is a group's exactly when its service's
// limits of its rpc give it entries.
func TestTableOfTheContract(t *testing.T) {
	t.Parallel()
	srv := grpc.NewServer()
	defer srv.Stop()
	scoringv1.RegisterScoringServiceServer(srv, scoringv1.UnimplementedScoringServiceServer{})
	forecastv1.RegisterForecastServiceServer(srv, forecastv1.UnimplementedForecastServiceServer{})
	authv1.RegisterTokenServiceServer(srv, authv1.UnimplementedTokenServiceServer{})
	table, err := Build(srv.GetServiceInfo(), mib, groupLimits)
	if err != nil {
		t.Fatal(err)
	}
	const groupLimit = 3 * mib
	for _, tc := range []struct {
		path, method        string
		group, public       bool
		permission          string
		bodyLimit, msgLimit int64
	}{
		{"/api/forecast/reading/group", forecastv1.ForecastService_ForecastReadingGroup_FullMethodName, true, false, "forecast:group", 16 * mib, groupLimit},
		{"/api/forecast/reading", forecastv1.ForecastService_ForecastReading_FullMethodName, false, false, "forecast:reading", mib, mib},
		{"/api/score/items/idsWithResults/standard", scoringv1.ScoringService_ScoreItemResults_FullMethodName, false, false, "score:standard", mib, mib},
		{"/authToken", authv1.TokenService_IssueToken_FullMethodName, false, true, "", AuthTokenBodyLimit, AuthTokenBodyLimit},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			r := table.ByPath[tc.path]
			if r == nil || table.ByMethod[tc.method] != r {
				t.Fatalf("by path %v, by method %v; want the same entry", r, table.ByMethod[tc.method])
			}
			if r.Method != tc.method || (r.Group != nil) != tc.group || r.Rule.Public != tc.public || r.Rule.Permission != tc.permission ||
				r.BodyLimit != tc.bodyLimit || r.MessageLimit != tc.msgLimit {
				t.Errorf("got %+v; want method %s group %v public %v permission %q limits %d/%d", *r, tc.method, tc.group, tc.public, tc.permission, tc.bodyLimit, tc.msgLimit)
			}
			if table.Label(tc.path) != tc.path {
				t.Errorf("label: got %q; want the path", table.Label(tc.path))
			}
		})
	}
	if AuthTokenBodyLimit != 64<<10 {
		t.Errorf("AuthTokenBodyLimit: got %d; want 64 KiB", AuthTokenBodyLimit)
	}
	for path, r := range table.ByPath {
		if want := groupLimits[r.Method].Entries > 0; (r.Group != nil) != want {
			t.Errorf("%s: group %v; want %v", path, r.Group, want)
		}
	}
	if table.Ceiling != groupLimit {
		t.Errorf("ceiling: got %d; want %d", table.Ceiling, groupLimit)
	}
}
