package scoring

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve"
)

// WireRules are the scoring messages' JSON rules beyond protojson's (docs/migrating.md,
// "Migrating from the original API"): itemid for an item's id, the numberCorrect and framework
// extras the original API's examples send (accepted and ignored), scaleScore as a number, and the
// lists decoded no further than one entry past the item limit of l.
func WireRules(l Limits) serve.WireRules {
	r := wireRules
	r.ListLimits = map[protoreflect.FullName]map[string]int{}
	for _, m := range itemLists {
		r.ListLimits[m] = map[string]int{"items": l.MaxItems}
	}
	r.MaxListLen = l.MaxItems // every other list: ids, strands, steps, the adaptive pool
	return r
}

// itemLists are the requests whose items field is the list of items scored.
var itemLists = []protoreflect.FullName{
	"yardstick.scoring.v1.ScoreItemResultsRequest", "yardstick.scoring.v1.ScoreItemIdsRequest",
	"yardstick.scoring.v1.ScoreItemResultsStrandsRequest", "yardstick.scoring.v1.ScoreDifficultiesBayesRequest",
	"yardstick.scoring.v1.ScoreItemResultsBayesRequest", "yardstick.scoring.v1.ScoreItemIdsBayesRequest",
	"yardstick.scoring.v1.ScoreItemResultsBayesStrandsRequest", "yardstick.scoring.v1.NextItemRequest",
}

var wireRules = serve.WireRules{
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
