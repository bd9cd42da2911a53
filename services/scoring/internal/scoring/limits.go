package scoring

import (
	"fmt"
	"math"

	"github.com/yardstick-dev/yardstick/pkg/serve"
)

// Limits bound what one scoring or catalog request may ask for (docs/operations.md,
// "Configuration"): over them, a 400 naming the field.
type Limits struct {
	MaxItems int // most items (or steps, or ids) in one request
}

// Settings registers the limits' settings with the frame's (serve.Identity.Settings) and returns
// the Limits they fill in (LimitsOf).
func Settings(s *serve.Settings) any {
	l := &Limits{}
	s.Add("YARDSTICK_MAX_ITEMS", "max-items", "most items in one scoring request", "5000", serve.Int(&l.MaxItems, serve.Within(1, math.MaxInt, "1 or more")))
	return l
}

// LimitsOf are the limits of cfg, loaded under an identity with Settings (cmd/scoring's).
func LimitsOf(cfg serve.Config) Limits {
	l, ok := cfg.Own.(*Limits)
	if !ok {
		panic(fmt.Sprintf("scoring: a configuration loaded without the scoring service's settings (its own: %T)", cfg.Own))
	}
	return *l
}
