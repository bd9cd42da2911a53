package scoring

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve"
)

// WireRules are the scoring messages' JSON rules beyond protojson's (docs/migrating.md,
// "Migrating from the original API"): itemid for an item's id, the numberCorrect and framework
// extras the original API's examples send (accepted and ignored), and scaleScore as a number.
var WireRules = serve.WireRules{
	Aliases: map[protoreflect.FullName]map[string]string{
		"yardstick.scoring.v1.ItemResult": {"itemid": "id"},
		"yardstick.scoring.v1.ItemId":     {"itemid": "id"},
	},
	Ignored: map[protoreflect.FullName][]string{
		"yardstick.scoring.v1.ScoreItemResultsRequest":             {"numberCorrect"},
		"yardstick.scoring.v1.ScoreItemResultsBayesRequest":        {"numberCorrect"},
		"yardstick.scoring.v1.ScoreItemResultsStrandsRequest":      {"numberCorrect"},
		"yardstick.scoring.v1.ScoreItemResultsBayesStrandsRequest": {"numberCorrect"},
		"yardstick.scoring.v1.ScoreScaleRequest":                   {"framework"},
		"yardstick.scoring.v1.ScoreScaleBayesRequest":              {"framework"},
		"yardstick.scoring.v1.ScoreFormRequest":                    {"framework"},
	},
	NumberAsText: map[protoreflect.FullName][]string{
		"yardstick.scoring.v1.ScoreScaleRequest":      {"scaleScore"},
		"yardstick.scoring.v1.ScoreScaleBayesRequest": {"scaleScore"},
	},
}
