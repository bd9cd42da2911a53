package forecast

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve"
)

// WireRules are the forecast messages' JSON rules beyond protojson's (docs/migrating.md,
// "Migrating from the original API"): the framework extra the original API's examples send
// (accepted and ignored), and a student's data as the positional array it sends.
var WireRules = serve.WireRules{
	Ignored: map[protoreflect.FullName][]string{
		"yardstick.forecast.v1.ForecastRequest":      {"framework"},
		"yardstick.forecast.v1.GroupForecastRequest": {"framework"},
	},
	Positional: map[protoreflect.FullName]bool{"yardstick.forecast.v1.StudentData": true},
}
