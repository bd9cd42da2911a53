package serve

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire"
)

// wireOptions are the contract's wire rules beyond protojson's (docs/migrating.md, "Migrating from the
// original API" lists them): aliases, extras the original API's examples send and that are
// accepted and ignored, the positional studentData entry, and scaleScore as a number.
var wireOptions = jsonwire.Options{
	Aliases: map[protoreflect.FullName]map[string]string{
		"yardstick.auth.v1.IssueTokenRequest": {"clientID": "clientId"},
		"yardstick.scoring.v1.ItemResult":     {"itemid": "id"},
		"yardstick.scoring.v1.ItemId":         {"itemid": "id"},
	},
	Ignored: map[protoreflect.FullName][]string{
		"yardstick.scoring.v1.ScoreItemResultsRequest":             {"numberCorrect"},
		"yardstick.scoring.v1.ScoreItemResultsBayesRequest":        {"numberCorrect"},
		"yardstick.scoring.v1.ScoreItemResultsStrandsRequest":      {"numberCorrect"},
		"yardstick.scoring.v1.ScoreItemResultsBayesStrandsRequest": {"numberCorrect"},
		"yardstick.scoring.v1.ScoreScaleRequest":                   {"framework"},
		"yardstick.scoring.v1.ScoreScaleBayesRequest":              {"framework"},
		"yardstick.scoring.v1.ScoreFormRequest":                    {"framework"},
		"yardstick.forecast.v1.ForecastRequest":                    {"framework"},
		"yardstick.forecast.v1.GroupForecastRequest":               {"framework"},
	},
	Positional: map[protoreflect.FullName]bool{"yardstick.forecast.v1.StudentData": true},
	NumberAsText: map[protoreflect.FullName][]string{
		"yardstick.scoring.v1.ScoreScaleRequest":      {"scaleScore"},
		"yardstick.scoring.v1.ScoreScaleBayesRequest": {"scaleScore"},
	},
}

// newWireCodec is a server's JSON codec: the wire rules, and lists cut off past the largest list
// the server accepts, so a body of a million empty entries costs no more than the limit's worth.
func newWireCodec(l Limits) *jsonwire.Codec {
	opts := wireOptions
	opts.ListLimits = map[string]int{"items": l.MaxItems, "studentData": l.MaxStudents, "cutLevels": l.MaxCutLevels}
	opts.MaxListLen = max(l.MaxItems, l.MaxStudents, l.MaxCutLevels)
	return jsonwire.New(opts)
}
