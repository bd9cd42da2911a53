package forecast

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// ForecastGroupStream is the group stream over gRPC: the JSON group stream's rules (groupstream.go)
// with messages for lines. The frame has authorized (forecast:batch and forecast:group),
// admitted and logged the stream, and ends it after 60 s without a message; this owns the
// settings, the students and the group. One student at a time, in order (the group's sums depend
// on it): the stream holds one request and one answer.
func (s *Server) ForecastGroupStream(st grpc.BidiStreamingServer[forecastv1.ForecastGroupStreamRequest, forecastv1.ForecastGroupStreamResponse]) error {
	ctx := st.Context()
	first, err := st.Recv()
	if errors.Is(err, io.EOF) {
		return rpcerr.Invalid("settings", "the stream is empty: its first message must be the group's settings")
	}
	if err != nil {
		return err
	}
	g, err := s.openGroupMessage(first)
	if err != nil {
		return err
	}
	var entry forecastv1.StudentForecast
	var msg forecastv1.ForecastGroupStreamRequest
	out := &forecastv1.ForecastGroupStreamResponse{}
	students := int64(0)
	for n := int64(2); ; n++ {
		msg.Reset()
		if err := st.RecvMsg(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
		d := msg.GetStudent()
		if d == nil {
			err = rpcerr.Invalid("student", "is required: only the first message holds the settings, every later one a student")
		} else {
			err = g.add(d, &entry)
		}
		if err != nil {
			out.Answer = &forecastv1.ForecastGroupStreamResponse_Invalid{Invalid: &forecastv1.InvalidStudent{Message: n, Status: rpcerr.Record(err)}}
		} else {
			students++
			out.Answer = &forecastv1.ForecastGroupStreamResponse_Student{Student: &entry}
		}
		if err := st.Send(out); err != nil {
			return err
		}
	}
	result := &forecastv1.GroupStreamResult{Students: students}
	if students > 0 {
		if result.Aggregate, err = g.aggregate(ctx); err != nil {
			return err
		}
	}
	return st.Send(&forecastv1.ForecastGroupStreamResponse{Answer: &forecastv1.ForecastGroupStreamResponse_Group{Group: result}})
}

// subjectList names the subjects and their frameworks for a message, `"reading" (NAME) or
// "math" (NAME)`; a subject the bundle lacks shows as `"math" (none)`.
func subjectList(b *measure.Bundle) string {
	var parts []string
	for _, subject := range []string{measure.SubjectReading, measure.SubjectMath} {
		fw := "none"
		if f, ok := b.Subject(subject); ok {
			fw = f.Name
		}
		parts = append(parts, fmt.Sprintf("%q (%s)", subject, fw))
	}
	return strings.Join(parts, " or ")
}

// openGroupMessage validates the first message, the settings, as the JSON stream's settings line.
func (s *Server) openGroupMessage(m *forecastv1.ForecastGroupStreamRequest) (*groupStream, error) {
	var p rpcerr.Problems
	set := m.GetSettings()
	if set == nil {
		p.Add("settings", "is required: the first message holds the group's settings, students follow")
		return nil, p.Err()
	}
	b := s.content.Bundle()
	subject := set.GetSubject()
	if subject != measure.SubjectReading && subject != measure.SubjectMath {
		p.Add("subject", "must be %s, got %q", subjectList(b), subject)
		subject = "" // the other settings are still checked, so that every problem is told at once
	}
	req := &forecastv1.GroupForecastRequest{TestUncertainty: set.TestUncertainty, CutLevels: set.GetCutLevels(), Grade: set.Grade, TimeOfYear: set.TimeOfYear}
	return s.startGroup(subject, &p, req)
}
