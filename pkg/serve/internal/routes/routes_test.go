package routes

import (
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/admission"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

const mib = 1 << 20

// testCost is a group call's cost model (a test's: the services own theirs).
var testCost = admission.GroupCost{JSON: admission.FrontCost{PerByte: 16, PerEntry: 1000, MinEntryBytes: 8}, Proto: admission.FrontCost{PerByte: 24, PerEntry: 320, MinEntryBytes: 2}, Base: 256 << 10}

// groupLimits are the limits a forecast service sets on its group rpcs (a test's: the services
// own theirs): a larger JSON body, a gRPC message of its own, costed per entry by its model.
var groupLimits = map[string]Method{
	forecastv1.ForecastService_ForecastReadingGroup_FullMethodName: {BodyLimit: 16 * mib, MessageLimit: 3 * mib, Entries: 100000, Cost: testCost},
	forecastv1.ForecastService_ForecastMathGroup_FullMethodName:    {BodyLimit: 16 * mib, MessageLimit: 3 * mib, Entries: 100000, Cost: testCost},
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
	if group.Group == nil || *group.Group != (admission.Group{Cost: testCost, Entries: 100000}) || group.BodyLimit != 16*mib || group.MessageLimit != 3*mib || group.Rule.Public || group.Rule.Permission == "" {
		t.Errorf("group route: got %+v; want its model and 100,000 entries, 16 MiB of JSON, 3 MiB over gRPC, a permission", *group)
	}
	single := table.ByPath["/api/forecast/reading"]
	if single == nil || single.Group != nil || single.BodyLimit != mib || single.MessageLimit != mib {
		t.Errorf("single forecast: got %+v; want 1 MiB both ways", single)
	}
	hc := table.ByMethod["/grpc.health.v1.Health/Check"]
	if hc == nil || !hc.Ruled || !hc.Rule.Public || hc.Path != "" || hc.MessageLimit != mib {
		t.Errorf("health: got %+v; want public, no path, the body limit", hc)
	}
	if table.Ceiling != 3*mib {
		t.Errorf("ceiling %d; want %d (the group rpcs')", table.Ceiling, 3*mib)
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
		forecastv1.ForecastService_ForecastMathGroup_FullMethodName:    {MessageLimit: mib / 2, Entries: 1, Cost: testCost},
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
			if r == nil || (r.Group != nil) != tc.group || r.BodyLimit != tc.bodyLimit || r.MessageLimit != tc.msgLimit {
				t.Errorf("got %+v; want group %v, limits %d/%d", r, tc.group, tc.bodyLimit, tc.msgLimit)
			}
		})
	}
	if g := table.ByMethod[forecastv1.ForecastService_ForecastMathGroup_FullMethodName].Group; g == nil || g.Entries != 1 {
		t.Errorf("group of one entry: got %+v; want 1 entry", g)
	}
	if table.ByMethod["/yardstick.forecast.v1.ForecastService/NoSuchRpc"] != nil || table.Ceiling != 4*mib {
		t.Errorf("ceiling %d; want 4 MiB (the stream's), and no route for an rpc not served", table.Ceiling)
	}
}

// TestGroupCostRequired: a group call's limits without a whole cost model, or a model on an rpc
// without entries, fail the build naming the rpc (never a group call that costs nothing); the
// least whole model is taken.
func TestGroupCostRequired(t *testing.T) {
	t.Parallel()
	srv := grpc.NewServer()
	defer srv.Stop()
	forecastv1.RegisterForecastServiceServer(srv, forecastv1.UnimplementedForecastServiceServer{})
	info, one := srv.GetServiceInfo(), admission.FrontCost{PerByte: 1, PerEntry: 1, MinEntryBytes: 1}
	for _, tc := range []struct {
		name string
		own  Method
		want string
	}{
		{"entries and the least whole model", Method{Entries: 1, Cost: admission.GroupCost{JSON: one, Proto: one}}, ""},
		{"entries without a model", Method{Entries: 100000}, "ForecastMathGroup, a group call of 100000 entries: cost model: JSON needs"},
		{"a model without its protobuf front", Method{Entries: 1, Cost: admission.GroupCost{JSON: one}}, "cost model: Proto needs"},
		{"a model without entries", Method{Cost: admission.GroupCost{JSON: one, Proto: one}}, "ForecastMathGroup: a cost model without Entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Build(info, mib, map[string]Method{forecastv1.ForecastService_ForecastMathGroup_FullMethodName: tc.own})
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v; want %q", err, tc.want)
			}
		})
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
