package forecast

import (
	"context"
	"flag"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// The demo differential test: with the embedded demonstration bundle every forecast answer must
// stay byte for byte what it was before frameworks came from the bundle (subjects mapped by the
// bundle, not the code). testdata/demo/requests.txt holds requests on every forecast path,
// valid and refused ones; testdata/demo/answers.txt the answers of the build before that change,
// with three lines since changed on purpose and nothing else: the plan's reach gained its grade
// and time of year and the answer its peak (requests 15 and 16), and a group stream's line that
// has a type error reports its other problems too (request 19).
// apiVersion and the bundle hash are not compared (servetest.Server.CheckCorpus).
var updateDemo = flag.Bool("update-demo", false, "rewrite testdata/demo/answers.txt from this build")

func TestDemoDifferential(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.CheckCorpus(t, "testdata/demo", *updateDemo)
}

// TestDemoGroupStreamSubject: the gRPC group stream's subject refusal names the demo's subjects
// and frameworks exactly as before.
func TestDemoGroupStreamSubject(t *testing.T) {
	t.Parallel()
	s := start(t)
	client := forecastv1.NewForecastServiceClient(s.Conn)
	settings := &forecastv1.ForecastGroupStreamRequest{Message: &forecastv1.ForecastGroupStreamRequest_Settings{
		Settings: &forecastv1.GroupStreamSettings{Subject: "science", TestUncertainty: proto.Float64(1), CutLevels: []float64{500}}}}
	_, err := callGroupStream(s.Authed(context.Background()), client, []*forecastv1.ForecastGroupStreamRequest{settings})
	const want = `subject: must be "reading" (lexile) or "math" (quantile), got "science"`
	if got := violations(err); got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}

// violations joins a status's field violations as "field: message" lines.
func violations(err error) string {
	var lines []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				lines = append(lines, v.GetField()+": "+v.GetDescription())
			}
		}
	}
	return strings.Join(lines, "\n")
}
