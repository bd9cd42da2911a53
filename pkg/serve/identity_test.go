package serve

import "google.golang.org/protobuf/reflect/protoreflect"

// The identities the frame's tests serve under: the names and default ports of the two services
// whose contracts the tests' fakes serve (the services own theirs, in their mains).
var (
	scoringID  = Identity{Name: "scoring", HTTPAddr: ":8080", GRPCAddr: ":9090"}
	forecastID = Identity{Name: "forecast", HTTPAddr: ":8081", GRPCAddr: ":9091"}
)

// identityOf is the test identity named name, or one of that name on scoring's ports.
func identityOf(name string) Identity {
	if name == forecastID.Name {
		return forecastID
	}
	id := scoringID
	id.Name = name
	return id
}

// scoringWire and forecastWire are the wire rules of the fake services' contracts, as the
// services own them (services/*/internal/*/wire.go): the front's tests send the original API's
// spellings to the fakes.
var (
	scoringWire = WireRules{
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
	forecastWire = WireRules{
		Ignored: map[protoreflect.FullName][]string{
			"yardstick.forecast.v1.ForecastRequest":      {"framework"},
			"yardstick.forecast.v1.GroupForecastRequest": {"framework"},
		},
		Positional: map[protoreflect.FullName]bool{"yardstick.forecast.v1.StudentData": true},
	}
)
