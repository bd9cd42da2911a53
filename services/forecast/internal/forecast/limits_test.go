package forecast

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// defaults are the limits docs/operations.md documents.
var defaults = Limits{MaxGroupBodyBytes: 16777216, MaxItems: 5000, MaxStudents: 100000, MaxCutLevels: 20}

// TestSettings: the service's limits as settings, each with the environment variable, flag,
// default, -help line and errors docs/operations.md documents, at both sides of its bounds.
func TestSettings(t *testing.T) {
	t.Parallel()
	dev := "YARDSTICK_DEV=true"
	for _, tc := range []struct {
		name    string
		env     []string
		args    []string
		want    Limits
		wantErr string
	}{
		{name: "defaults", env: []string{dev}, want: defaults},
		{name: "the least of each", env: []string{dev, "YARDSTICK_MAX_ITEMS=1", "YARDSTICK_MAX_STUDENTS=1", "YARDSTICK_MAX_CUT_LEVELS=1", "YARDSTICK_MAX_GROUP_BODY_BYTES=1048576"},
			want: Limits{MaxGroupBodyBytes: 1 << 20, MaxItems: 1, MaxStudents: 1, MaxCutLevels: 1}},
		{name: "flags over the environment", env: []string{dev, "YARDSTICK_MAX_STUDENTS=7"}, args: []string{"-max-students", "8", "-max-cut-levels=9"},
			want: Limits{MaxGroupBodyBytes: 16777216, MaxItems: 5000, MaxStudents: 8, MaxCutLevels: 9}},
		{name: "no items", env: []string{dev, "YARDSTICK_MAX_ITEMS=0"}, wantErr: "YARDSTICK_MAX_ITEMS 0: want 1 or more"},
		{name: "no students", env: []string{dev, "YARDSTICK_MAX_STUDENTS=0"}, wantErr: "YARDSTICK_MAX_STUDENTS 0: want 1 or more"},
		{name: "no cut levels", env: []string{dev, "YARDSTICK_MAX_CUT_LEVELS=0"}, wantErr: "YARDSTICK_MAX_CUT_LEVELS 0: want 1 or more"},
		{name: "not a number", env: []string{dev, "YARDSTICK_MAX_STUDENTS=many"}, wantErr: `YARDSTICK_MAX_STUDENTS: "many" is not a whole number`},
		{name: "not bytes", env: []string{dev, "YARDSTICK_MAX_GROUP_BODY_BYTES=16M"}, wantErr: `YARDSTICK_MAX_GROUP_BODY_BYTES: "16M" is not a number of bytes`},
		{name: "a group body under the body limit", env: []string{dev, "YARDSTICK_MAX_GROUP_BODY_BYTES=1048575"},
			wantErr: "YARDSTICK_MAX_GROUP_BODY_BYTES 1048575: want YARDSTICK_MAX_BODY_BYTES (1048576) or more"},
		{name: "a group body under a raised body limit", env: []string{dev, "YARDSTICK_MAX_BODY_BYTES=16777217"},
			wantErr: "YARDSTICK_MAX_GROUP_BODY_BYTES 16777216: want YARDSTICK_MAX_BODY_BYTES (16777217) or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := serve.LoadConfig(testIdentity, tc.args, tc.env, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("got error %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := LimitsOf(cfg); got != tc.want {
				t.Errorf("got %+v; want %+v", got, tc.want)
			}
		})
	}
}

// TestSettingsHelp: -help lists the limits after the frame's settings, as docs/operations.md does.
func TestSettingsHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if _, err := serve.LoadConfig(testIdentity, []string{"-help"}, nil, &out); !errors.Is(err, serve.ErrHelp) {
		t.Fatalf("got %v; want ErrHelp", err)
	}
	want := "  -max-body-bytes int\n    \tlargest request body (env YARDSTICK_MAX_BODY_BYTES, default \"1048576\")\n" +
		"  -max-group-body-bytes int\n    \tlargest group forecast request body (env YARDSTICK_MAX_GROUP_BODY_BYTES, default \"16777216\")\n" +
		"  -max-items int\n    \tmost items in one scoring request (env YARDSTICK_MAX_ITEMS, default \"5000\")\n" +
		"  -max-students int\n    \tmost students in one group forecast (env YARDSTICK_MAX_STUDENTS, default \"100000\")\n" +
		"  -max-cut-levels int\n    \tmost cut levels in one forecast (env YARDSTICK_MAX_CUT_LEVELS, default \"20\")\n" +
		"  -version\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("help lacks\n%s\ngot:\n%s", want, out.String())
	}
}

// TestGroupMessageLimit: what the most students fill in protobuf and 64 KiB, under the JSON limit.
func TestGroupMessageLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		l    Limits
		want int64
	}{
		{"1,000 students", Limits{MaxGroupBodyBytes: 16 << 20, MaxStudents: 1000}, 1000*29 + 65536},
		{"the defaults: 100,000 students", defaults, 2965536},
		{"under a smaller JSON limit", Limits{MaxGroupBodyBytes: 2 << 20, MaxStudents: 100000}, 2 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.l.groupMessageLimit(); got != tc.want {
				t.Errorf("got %d; want %d", got, tc.want)
			}
		})
	}
	// A student at its largest: three doubles and the entry's tag and length.
	big := &forecastv1.GroupForecastRequest{StudentData: []*forecastv1.StudentData{{PriorAbility: proto.Float64(-1e4), PriorUncertainty: proto.Float64(1e4), ElapsedDays: proto.Float64(3653)}}}
	if got := proto.Size(big); got != protoStudentBytes {
		t.Errorf("a student takes %d bytes in protobuf; want protoStudentBytes (%d)", got, protoStudentBytes)
	}
}

// startWith serves the forecast service with l as its limits.
func startWith(t *testing.T, l Limits) *servetest.Server {
	t.Helper()
	return servetest.Start(t, testIdentity, func(cfg serve.Config) serve.Service {
		content, err := measure.OpenLive("")
		if err != nil {
			t.Fatal(err)
		}
		return New(content, LimitsOf(cfg), slog.New(slog.DiscardHandler)).Service()
	}, func(cfg *serve.Config) { *cfg.Own.(*Limits) = l })
}

// TestGroupLimitsServed: the frame serves the group forecasts with the limits the service sets on
// them: a JSON body up to the group body limit (past the frame's 1 MiB) and 413 past it, while a
// single forecast keeps the frame's; over gRPC, a group message up to what the most students fill.
func TestGroupLimitsServed(t *testing.T) {
	t.Parallel()
	l := Limits{MaxGroupBodyBytes: 2 << 20, MaxItems: 5000, MaxStudents: 1000, MaxCutLevels: 20}
	s := startWith(t, l)
	padded := func(body string, n int) string { return body[:len(body)-1] + strings.Repeat(" ", n-len(body)) + "}" }
	for _, tc := range []struct {
		name, path, body string
		want             int
	}{
		{"a group of exactly the group limit", "/api/forecast/reading/group", padded(group, 2<<20), http.StatusOK},
		{"a group one byte over", "/api/forecast/math/group", padded(group, 2<<20+1), http.StatusRequestEntityTooLarge},
		{"a single forecast of exactly the frame's limit", "/api/forecast/reading", padded(single, 1<<20), http.StatusOK},
		{"a single forecast one byte over", "/api/forecast/reading", padded(single, 1<<20+1), http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Expect: the answer to a body over the limit comes before the body is sent.
			if r := s.Do(http.MethodPost, tc.path, "application/json", tc.body, "Authorization", "Bearer "+s.Token(), "Expect", "100-continue"); r.Status != tc.want {
				t.Errorf("got %d %.200s; want %d", r.Status, r.Body, tc.want)
			}
		})
	}
	students := func(n int) *forecastv1.GroupForecastRequest {
		req := &forecastv1.GroupForecastRequest{TestUncertainty: proto.Float64(30), CutLevels: []float64{600}}
		for range n {
			req.StudentData = append(req.StudentData, &forecastv1.StudentData{PriorAbility: proto.Float64(-1e4), PriorUncertainty: proto.Float64(1e4), ElapsedDays: proto.Float64(3653)})
		}
		return req
	}
	client := forecastv1.NewForecastServiceClient(s.Conn)
	// 3,000 students fit the message limit (94,536 bytes) and are the service's to refuse.
	if _, err := client.ForecastReadingGroup(s.Authed(t.Context()), students(3000)); status.Code(err) != codes.InvalidArgument {
		t.Errorf("3,000 students over gRPC: got %v; want InvalidArgument (the student limit)", err)
	}
	if _, err := client.ForecastReadingGroup(s.Authed(t.Context()), students(3500)); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("3,500 students over gRPC (%d bytes): got %v; want ResourceExhausted (the message limit)", proto.Size(students(3500)), err)
	}
}

// TestDocumentedSizes: the list sizes the forecast document states are the default limits.
func TestDocumentedSizes(t *testing.T) {
	t.Parallel()
	sizes := map[string]int{"studentData": defaults.MaxStudents, "cutLevels": defaults.MaxCutLevels, "textMeasures": defaults.MaxItems}
	if n := servetest.DocumentedSizes(t, "forecast", sizes); n < 4 {
		t.Errorf("checked %d lists; want studentData, textMeasures and cutLevels of each request (4 or more)", n)
	}
}

// TestListLimitsCoverTheContract: every list of studentData or cutLevels a forecast rpc takes
// (batch records and group stream settings included) is decoded no further than its limit.
func TestListLimitsCoverTheContract(t *testing.T) {
	t.Parallel()
	limits := map[string]int{"studentData": defaults.MaxStudents, "cutLevels": defaults.MaxCutLevels}
	rules := WireRules(defaults)
	lists := servetest.RequestLists([]string{"studentData", "cutLevels"}, forecastv1.File_yardstick_forecast_v1_forecast_proto.Services().Get(0))
	if len(lists) < 3 {
		t.Fatalf("found %v; want the lists of ForecastRequest, GroupForecastRequest and GroupStreamSettings", lists)
	}
	for msg, fields := range lists {
		for _, f := range fields {
			if got := rules.ListLimits[msg][f]; got != limits[f] {
				t.Errorf("%s.%s: limit %d; want %d", msg, f, got, limits[f])
			}
		}
	}
	if got, want := rules.MaxListLen, defaults.MaxStudents; got != want {
		t.Errorf("every other list: limit %d; want the longest the service takes, %d", got, want)
	}
}
