package routes

import (
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

const mib = 1 << 20

// groupLimits are the limits a forecast service sets on its group rpcs (a test's: the services
// own theirs): a larger JSON body, a gRPC message of its own, costed per entry.
var groupLimits = map[string]Method{
	forecastv1.ForecastService_ForecastReadingGroup_FullMethodName: {BodyLimit: 16 * mib, MessageLimit: 3 * mib, Entries: 100000},
	forecastv1.ForecastService_ForecastMathGroup_FullMethodName:    {BodyLimit: 16 * mib, MessageLimit: 3 * mib, Entries: 100000},
}

// TestBuild: the table of a forecast server, built alone from the contract and the service's
// limits: a group forecast takes the limits its service sets on its rpc; a single forecast the
// body limit; health is public, has no path and takes the body limit; the ceiling is the largest
// message limit; paths label metrics, anything else is "other".
func TestBuild(t *testing.T) {
	t.Parallel()
	srv := grpc.NewServer()
	defer srv.Stop()
	forecastv1.RegisterForecastServiceServer(srv, forecastv1.UnimplementedForecastServiceServer{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	table, err := Build(srv.GetServiceInfo(), mib, groupLimits)
	if err != nil {
		t.Fatal(err)
	}
	group := table.ByPath["/api/forecast/reading/group"]
	if group == nil || group != table.ByMethod[forecastv1.ForecastService_ForecastReadingGroup_FullMethodName] {
		t.Fatalf("group route: got %+v; want the same entry by path and by method", group)
	}
	if !group.Group || group.BodyLimit != 16*mib || group.MessageLimit != 3*mib || group.Rule.Public || group.Rule.Permission == "" {
		t.Errorf("group route: got %+v; want group, 16 MiB of JSON, 3 MiB over gRPC, a permission", *group)
	}
	single := table.ByPath["/api/forecast/reading"]
	if single == nil || single.Group || single.BodyLimit != mib || single.MessageLimit != mib {
		t.Errorf("single forecast: got %+v; want 1 MiB both ways", single)
	}
	hc := table.ByMethod["/grpc.health.v1.Health/Check"]
	if hc == nil || !hc.Ruled || !hc.Rule.Public || hc.Path != "" || hc.MessageLimit != mib {
		t.Errorf("health: got %+v; want public, no path, the body limit", hc)
	}
	if table.Ceiling != 3*mib || table.MaxEntries != 100000 {
		t.Errorf("ceiling %d, entries %d; want %d, 100000 (the group rpcs')", table.Ceiling, table.MaxEntries, 3*mib)
	}
	if table.Label("/api/forecast/reading") != "/api/forecast/reading" || table.Label("/healthz") != "/healthz" || table.Label("/wp-admin") != "other" {
		t.Error("labels: want known paths as themselves, anything else other")
	}
	if !IsPublicService("grpc.health.v1.Health") || IsPublicService("yardstick.forecast.v1.ForecastService") {
		t.Error("IsPublicService: want health public and the forecast service not")
	}
}

// TestMethodLimits: what a service's limits of one rpc leave unset takes the frame's body limit
// (a body limit alone is the message limit too); an rpc without a path takes its message limit;
// a service's limits of an rpc not served change nothing, its entries included.
func TestMethodLimits(t *testing.T) {
	t.Parallel()
	srv := grpc.NewServer()
	defer srv.Stop()
	forecastv1.RegisterForecastServiceServer(srv, forecastv1.UnimplementedForecastServiceServer{})
	table, err := Build(srv.GetServiceInfo(), mib, map[string]Method{
		forecastv1.ForecastService_ForecastReadingGroup_FullMethodName: {BodyLimit: 2 * mib},
		forecastv1.ForecastService_ForecastMathGroup_FullMethodName:    {MessageLimit: mib / 2, Entries: 1},
		forecastv1.ForecastService_ForecastGroupStream_FullMethodName:  {MessageLimit: 4 * mib},
		"/yardstick.forecast.v1.ForecastService/NoSuchRpc":             {BodyLimit: 64 * mib, Entries: 1000},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method              string
		group               bool
		bodyLimit, msgLimit int64
	}{
		{forecastv1.ForecastService_ForecastReadingGroup_FullMethodName, false, 2 * mib, 2 * mib},
		{forecastv1.ForecastService_ForecastMathGroup_FullMethodName, true, mib, mib / 2},
		{forecastv1.ForecastService_ForecastGroupStream_FullMethodName, false, mib, 4 * mib},
		{forecastv1.ForecastService_ForecastReading_FullMethodName, false, mib, mib},
	} {
		t.Run(tc.method, func(t *testing.T) {
			t.Parallel()
			r := table.ByMethod[tc.method]
			if r == nil || r.Group != tc.group || r.BodyLimit != tc.bodyLimit || r.MessageLimit != tc.msgLimit {
				t.Errorf("got %+v; want group %v, limits %d/%d", r, tc.group, tc.bodyLimit, tc.msgLimit)
			}
		})
	}
	if table.ByMethod["/yardstick.forecast.v1.ForecastService/NoSuchRpc"] != nil || table.Ceiling != 4*mib || table.MaxEntries != 1 {
		t.Errorf("ceiling %d, entries %d; want 4 MiB (the stream's), 1 (the one group's), and no route for an rpc not served", table.Ceiling, table.MaxEntries)
	}
}

// TestRecordOption: a batch record may name exactly the unary rpcs the contract marks with
// yardstick.batch.v1.record; not the batch streams, the group stream, health or anything public.
func TestRecordOption(t *testing.T) {
	t.Parallel()
	srv := grpc.NewServer()
	defer srv.Stop()
	forecastv1.RegisterForecastServiceServer(srv, forecastv1.UnimplementedForecastServiceServer{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	table, err := Build(srv.GetServiceInfo(), mib, groupLimits)
	if err != nil {
		t.Fatal(err)
	}
	for method, want := range map[string]bool{
		forecastv1.ForecastService_ForecastReading_FullMethodName:       true,
		forecastv1.ForecastService_ForecastMathGroup_FullMethodName:     true,
		forecastv1.ForecastService_ForecastComprehension_FullMethodName: true,
		forecastv1.ForecastService_ForecastBatch_FullMethodName:         false,
		forecastv1.ForecastService_ForecastGroupStream_FullMethodName:   false,
		"/grpc.health.v1.Health/Check":                                  false,
	} {
		if got := table.ByMethod[method].Record; got != want {
			t.Errorf("%s: Record %v; want %v", method, got, want)
		}
	}
}
