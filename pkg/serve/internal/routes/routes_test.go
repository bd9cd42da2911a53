package routes

import (
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

const mib = 1 << 20

// TestBuild: the table of a forecast server, built alone from the contract: a group forecast takes
// the group body limit and, over gRPC, what its students fill in protobuf; a single forecast the
// body limit; health is public, has no path and takes the body limit; the ceiling is the largest
// message limit; paths label metrics, anything else is "other".
func TestBuild(t *testing.T) {
	t.Parallel()
	srv := grpc.NewServer()
	defer srv.Stop()
	forecastv1.RegisterForecastServiceServer(srv, forecastv1.UnimplementedForecastServiceServer{})
	healthpb.RegisterHealthServer(srv, health.NewServer())
	l := Limits{MaxBodyBytes: mib, MaxGroupBodyBytes: 16 * mib, MaxStudents: 100000}
	table, err := Build(srv.GetServiceInfo(), l)
	if err != nil {
		t.Fatal(err)
	}
	group := table.ByPath["/api/forecast/reading/group"]
	if group == nil || group != table.ByMethod[forecastv1.ForecastService_ForecastReadingGroup_FullMethodName] {
		t.Fatalf("group route: got %+v; want the same entry by path and by method", group)
	}
	if !group.Group || group.BodyLimit != 16*mib || group.MessageLimit != grpcGroupLimit(l) || group.Rule.Public || group.Rule.Permission == "" {
		t.Errorf("group route: got %+v; want group, 16 MiB of JSON, the gRPC group limit, a permission", *group)
	}
	single := table.ByPath["/api/forecast/reading"]
	if single == nil || single.Group || single.BodyLimit != mib || single.MessageLimit != mib {
		t.Errorf("single forecast: got %+v; want 1 MiB both ways", single)
	}
	hc := table.ByMethod["/grpc.health.v1.Health/Check"]
	if hc == nil || !hc.Ruled || !hc.Rule.Public || hc.Path != "" || hc.MessageLimit != mib {
		t.Errorf("health: got %+v; want public, no path, the body limit", hc)
	}
	if table.Ceiling != grpcGroupLimit(l) {
		t.Errorf("ceiling: got %d; want %d", table.Ceiling, grpcGroupLimit(l))
	}
	if table.Label("/api/forecast/reading") != "/api/forecast/reading" || table.Label("/healthz") != "/healthz" || table.Label("/wp-admin") != "other" {
		t.Error("labels: want known paths as themselves, anything else other")
	}
}

// TestGRPCGroupLimit: what the most students fill in protobuf and 64 KiB, under the JSON limit.
func TestGRPCGroupLimit(t *testing.T) {
	t.Parallel()
	if got, want := grpcGroupLimit(Limits{MaxGroupBodyBytes: 16 * mib, MaxStudents: 1000}), int64(1000*29+65536); got != want {
		t.Errorf("group limit for 1,000 students: got %d; want %d", got, want)
	}
	if got, want := grpcGroupLimit(Limits{MaxGroupBodyBytes: 2 * mib, MaxStudents: 100000}), int64(2*mib); got != want {
		t.Errorf("group limit under a smaller JSON limit: got %d; want %d (the JSON limit)", got, want)
	}
	if !isGroup("/api/forecast/math/group") || isGroup("/api/forecast/math") {
		t.Error("isGroup: want the /group suffix and only it")
	}
	if !IsPublicService("grpc.health.v1.Health") || IsPublicService("yardstick.forecast.v1.ForecastService") {
		t.Error("IsPublicService: want health public and the forecast service not")
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
	table, err := Build(srv.GetServiceInfo(), Limits{MaxBodyBytes: mib, MaxGroupBodyBytes: 16 * mib, MaxStudents: 100000})
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
