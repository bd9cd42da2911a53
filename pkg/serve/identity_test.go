package serve

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/reflect/protoreflect"

	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// The identities the frame's tests serve under: the names and default ports of the two services
// whose contracts the tests' fakes serve (the services own theirs, in their mains), with the
// settings of the fakes' limits.
var (
	scoringID  = Identity{Name: "scoring", HTTPAddr: ":8080", GRPCAddr: ":9090", Settings: fakeSettings}
	forecastID = Identity{Name: "forecast", HTTPAddr: ":8081", GRPCAddr: ":9091", Settings: fakeSettings}
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

// fakeLimits are the limits of the fakes of the services' contracts (forecast_fake_test.go,
// answerAll) and of the test service's group rpc: what the services bound their own rpcs by
// (services/*/internal/*/limits.go), as settings a service brings (Identity.Settings) and a
// test may change before it serves its configuration (limitsOf).
type fakeLimits struct {
	MaxGroupBodyBytes int64
	MaxItems          int
	MaxStudents       int
	MaxCutLevels      int
}

// fakeDefaults are fakeLimits' defaults, for the tests that serve the fakes without a
// configuration of their own.
var fakeDefaults = fakeLimits{MaxGroupBodyBytes: 16 << 20, MaxItems: 5000, MaxStudents: 100000, MaxCutLevels: 20}

// fakeSettings registers fakeLimits' settings as the services register theirs.
func fakeSettings(s *Settings) any {
	l := &fakeLimits{}
	atLeastOne := Within(1, math.MaxInt, "1 or more")
	s.Add("YARDSTICK_MAX_GROUP_BODY_BYTES", "max-group-body-bytes", "largest group forecast request body", "16777216", Bytes(&l.MaxGroupBodyBytes))
	s.Add("YARDSTICK_MAX_ITEMS", "max-items", "most items in one scoring request", "5000", Int(&l.MaxItems, atLeastOne))
	s.Add("YARDSTICK_MAX_STUDENTS", "max-students", "most students in one group forecast", "100000", Int(&l.MaxStudents, atLeastOne))
	s.Add("YARDSTICK_MAX_CUT_LEVELS", "max-cut-levels", "most cut levels in one forecast", "20", Int(&l.MaxCutLevels, atLeastOne))
	s.Check(func(c Config) error {
		if l.MaxGroupBodyBytes < c.MaxBodyBytes {
			return fmt.Errorf("YARDSTICK_MAX_GROUP_BODY_BYTES %d: want YARDSTICK_MAX_BODY_BYTES (%d) or more", l.MaxGroupBodyBytes, c.MaxBodyBytes)
		}
		return nil
	})
	return l
}

// limitsOf is the fakes' limits of cfg, loaded under a test identity; a test may change them
// before it serves cfg.
func limitsOf(cfg Config) *fakeLimits { return cfg.Own.(*fakeLimits) }

// groupLimits are the limits of a group rpc under l, as the forecast service sets them on its
// group forecasts: the group body limit, and over gRPC what the most students (29 bytes each)
// fill in protobuf and 64 KiB; costed per student by the forecast service's model (its limits.go),
// which the budget, fairness and slow-body tests' figures assume.
func (l fakeLimits) groupLimits() MethodLimits {
	return MethodLimits{BodyLimit: l.MaxGroupBodyBytes, MessageLimit: min(l.MaxGroupBodyBytes, int64(l.MaxStudents)*29+64<<10), Entries: l.MaxStudents,
		Cost: GroupCost{JSON: FrontCost{PerByte: 16, PerEntry: 1000, MinEntryBytes: 8}, Proto: FrontCost{PerByte: 24, PerEntry: 320, MinEntryBytes: 2}, Base: 256 << 10}}
}

// forecastMethods are the limits of the forecast contract's group rpcs under l.
func (l fakeLimits) forecastMethods() map[string]MethodLimits {
	return map[string]MethodLimits{
		forecastv1.ForecastService_ForecastReadingGroup_FullMethodName: l.groupLimits(),
		forecastv1.ForecastService_ForecastMathGroup_FullMethodName:    l.groupLimits(),
	}
}

// wire is r with the list limits of both contracts' lists under l, as the services set them.
func (l fakeLimits) wire(r WireRules) WireRules {
	r.ListLimits = map[protoreflect.FullName]map[string]int{
		"yardstick.forecast.v1.ForecastRequest":      {"cutLevels": l.MaxCutLevels},
		"yardstick.forecast.v1.GroupForecastRequest": {"studentData": l.MaxStudents, "cutLevels": l.MaxCutLevels},
		"yardstick.forecast.v1.GroupStreamSettings":  {"cutLevels": l.MaxCutLevels},
	}
	for _, m := range []protoreflect.FullName{"ScoreItemResultsRequest", "ScoreItemIdsRequest", "ScoreItemResultsStrandsRequest",
		"ScoreDifficultiesBayesRequest", "ScoreItemResultsBayesRequest", "ScoreItemIdsBayesRequest", "ScoreItemResultsBayesStrandsRequest", "NextItemRequest"} {
		r.ListLimits["yardstick.scoring.v1."+m] = map[string]int{"items": l.MaxItems}
	}
	r.MaxListLen = max(l.MaxItems, l.MaxStudents, l.MaxCutLevels)
	return r
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
