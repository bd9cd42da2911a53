package scoring

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// decimal is the scaleScore syntax: an optional minus, digits, an optional fraction. Go's own
// float syntax (5_00, 0x1p9, +Inf) is not a score.
var decimal = regexp.MustCompile(`^-?(\d+(\.\d*)?|\.\d+)$`)

// scale checks the scale-score fields and converts the score through its link table (§5).
func (s *Server) scale(p *rpcerr.Problems, b *measure.Bundle, linkID, scaleScore *string, scaleSem *float64) (*measure.Framework, measure.Normal, bool) {
	var link *measure.Link
	switch {
	case linkID == nil || *linkID == "":
		p.Add("linkId", "is required")
	default:
		var ok bool
		if link, ok = b.Link(*linkID); !ok {
			p.Add("linkId", "unknown link table %q", *linkID)
		}
	}
	score, scoreOK := scaleScoreOf(p, scaleScore)
	semOK := checkScaleSem(p, scaleSem)
	if link == nil || !scoreOK || !semOK {
		return linkFramework(b, link), measure.Normal{}, false
	}
	obs, err := link.Measure(score, *scaleSem)
	if err != nil {
		var rangeErr *measure.RangeError
		if errors.As(err, &rangeErr) {
			p.Add("scaleScore", "%s", rangeErr.Error())
		} else {
			p.Add("scaleScore", "%v", err)
		}
		return linkFramework(b, link), measure.Normal{}, false
	}
	return linkFramework(b, link), obs, true
}

// scaleScoreOf reads scaleScore, a decimal number written as text, and says what is wrong with it
// in p.
func scaleScoreOf(p *rpcerr.Problems, scaleScore *string) (float64, bool) {
	if scaleScore == nil {
		p.Add("scaleScore", "is required")
		return 0, false
	}
	text := strings.TrimSpace(*scaleScore)
	v, err := strconv.ParseFloat(text, 64)
	if !decimal.MatchString(text) || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		p.Add("scaleScore", "must be a decimal number such as \"512\" or \"512.5\", got %q", *scaleScore)
		return 0, false
	}
	return v, true
}

// checkScaleSem reports whether scaleSem is given, finite, above 0 and at most
// measure.MaxUncertainty, and says what is wrong with it in p.
func checkScaleSem(p *rpcerr.Problems, scaleSem *float64) bool {
	switch {
	case scaleSem == nil:
		p.Add("scaleSem", "is required")
		return false
	case !measure.Finite(*scaleSem) || *scaleSem <= 0 || *scaleSem > measure.MaxUncertainty:
		p.Add("scaleSem", "must be greater than 0 and at most %d, got %v", measure.MaxUncertainty, *scaleSem)
		return false
	}
	return true
}

func linkFramework(b *measure.Bundle, link *measure.Link) *measure.Framework {
	if link == nil {
		return nil
	}
	fw, _ := b.Framework(link.Framework)
	return fw
}

func errUnknownFramework(name string) error {
	return fmt.Errorf("content bundle: framework %q is not defined", name)
}

func errUnknownItem(id string) error {
	return fmt.Errorf("content bundle: item %q is not in the bank", id)
}
