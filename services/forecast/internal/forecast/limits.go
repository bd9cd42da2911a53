package forecast

import (
	"fmt"
	"math"

	"github.com/yardstick-dev/yardstick/pkg/serve"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
)

// Limits bound what one forecast request may ask for (docs/operations.md, "Configuration"): over
// them, 413 (a group's body) or a 400 naming the field.
type Limits struct {
	MaxGroupBodyBytes int64 // a group forecast's JSON body: 100,000 students do not fit in 1 MiB
	MaxItems          int   // most text measures of a comprehension forecast
	MaxStudents       int   // most students in one group forecast
	MaxCutLevels      int   // most cut levels in one forecast
}

// Settings registers the limits' settings with the frame's (serve.Identity.Settings) and returns
// the Limits they fill in (LimitsOf).
func Settings(s *serve.Settings) any {
	l := &Limits{}
	atLeastOne := serve.Within(1, math.MaxInt, "1 or more")
	s.Add("YARDSTICK_MAX_GROUP_BODY_BYTES", "max-group-body-bytes", "largest group forecast request body", "16777216", serve.Bytes(&l.MaxGroupBodyBytes))
	s.Add("YARDSTICK_MAX_ITEMS", "max-items", "most items in one scoring request", "5000", serve.Int(&l.MaxItems, atLeastOne))
	s.Add("YARDSTICK_MAX_STUDENTS", "max-students", "most students in one group forecast", "100000", serve.Int(&l.MaxStudents, atLeastOne))
	s.Add("YARDSTICK_MAX_CUT_LEVELS", "max-cut-levels", "most cut levels in one forecast", "20", serve.Int(&l.MaxCutLevels, atLeastOne))
	s.Check(func(c serve.Config) error {
		if l.MaxGroupBodyBytes < c.MaxBodyBytes {
			return fmt.Errorf("YARDSTICK_MAX_GROUP_BODY_BYTES %d: want YARDSTICK_MAX_BODY_BYTES (%d) or more", l.MaxGroupBodyBytes, c.MaxBodyBytes)
		}
		return nil
	})
	return l
}

// LimitsOf are the limits of cfg, loaded under an identity with Settings (cmd/forecast's).
func LimitsOf(cfg serve.Config) Limits {
	l, ok := cfg.Own.(*Limits)
	if !ok {
		panic(fmt.Sprintf("forecast: a configuration loaded without the forecast service's settings (its own: %T)", cfg.Own))
	}
	return *l
}

// protoStudentBytes is the most one student takes in protobuf without repeating a field: three
// doubles of 9 bytes, and the entry's tag and length.
const protoStudentBytes = 29

// groupMessageLimit is a group forecast message's limit over gRPC, at most the JSON one: what the
// most students fill in protobuf, and 64 KiB (3.0 MiB for 100,000). The frame reads a gRPC message
// whole before decoding it, so the limit sets how many reads fit in its read pool at once.
func (l Limits) groupMessageLimit() int64 {
	return min(l.MaxGroupBodyBytes, int64(l.MaxStudents)*protoStudentBytes+64<<10)
}

// groupCost is the group forecasts' cost model: heap bytes per body byte, and at least a fixed
// amount per student up to the student limit, measured with the garbage collector off;
// TestBudgetCoversTheRealHandler (cost_test.go) fails when a factor no longer covers what it
// measures. A JSON student `[1,1,1]` costs what a 60-byte object does, so a JSON group is costed by
// the students its body can hold at most.
var groupCost = serve.GroupCost{
	JSON: serve.FrontCost{
		PerByte:       16,   // measured 14.7 (100,000 typical object students: 6.1 MB of body, 89.6 MB of heap)
		PerEntry:      1000, // measured 896 per object student, 848 per array student (85 MB for 100,000)
		MinEntryBytes: 8,    // `[1,1,1],`; `{},` is shorter but costs 290
	},
	Proto: serve.FrontCost{
		PerByte:       24,  // measured 20.0, client included (100,000 students: 2.9 MB, 58 MB)
		PerEntry:      320, // empty students: 290 each over gRPC
		MinEntryBytes: 2,   // an empty StudentData: tag and length
	},
	Base: 256 << 10, // per call, whatever its size (measured about 70 KB)
}

// methods are the limits of the group forecasts, which the frame applies in place of its body
// limit: their bodies, and their cost to the memory budget by the students a body can hold.
func (l Limits) methods() map[string]serve.MethodLimits {
	group := serve.MethodLimits{BodyLimit: l.MaxGroupBodyBytes, MessageLimit: l.groupMessageLimit(), Entries: l.MaxStudents, Cost: groupCost}
	return map[string]serve.MethodLimits{
		forecastv1.ForecastService_ForecastReadingGroup_FullMethodName: group,
		forecastv1.ForecastService_ForecastMathGroup_FullMethodName:    group,
	}
}
