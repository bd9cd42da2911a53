package forecast

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve"
)

// WireRules are the forecast messages' JSON rules beyond protojson's (docs/migrating.md,
// "Migrating from the original API"): the framework extra the original API's examples send
// (accepted and ignored), a student's data as the positional array it sends, and the lists
// decoded no further than one entry past their limits under l.
func WireRules(l Limits) serve.WireRules {
	return serve.WireRules{
		Ignored: map[protoreflect.FullName][]string{
			"yardstick.forecast.v1.ForecastRequest":      {"framework"},
			"yardstick.forecast.v1.GroupForecastRequest": {"framework"},
		},
		Positional: map[protoreflect.FullName]bool{"yardstick.forecast.v1.StudentData": true},
		ListLimits: map[protoreflect.FullName]map[string]int{
			"yardstick.forecast.v1.ForecastRequest":      {"cutLevels": l.MaxCutLevels},
			"yardstick.forecast.v1.GroupForecastRequest": {"studentData": l.MaxStudents, "cutLevels": l.MaxCutLevels},
			"yardstick.forecast.v1.GroupStreamSettings":  {"cutLevels": l.MaxCutLevels},
		},
		// Every other list (text measures, priors): no longer than the longest the service takes.
		MaxListLen: max(l.MaxItems, l.MaxStudents, l.MaxCutLevels),
	}
}
