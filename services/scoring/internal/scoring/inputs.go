package scoring

import (
	"strconv"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// itemRef is what the item-based requests have in common: an id and, for result forms, a result.
type itemRef struct {
	id     *string
	result *int32 // nil for number-correct forms
}

// resolved is a request's items found in the bank.
type resolved struct {
	fw      *measure.Framework
	answers []measure.Answer
	// maxScore is the highest raw score of the request's items: the sum of their maximum scores,
	// an unknown item counting 1, so it is the number of items when every item is dichotomous.
	maxScore int
}

// resolveItems checks the items of a request against the bank (docs/api.md): non-empty, within
// the limit, known ids, no duplicates, results 0 to the item's maximum score (0 or 1 for a
// dichotomous item), one framework agreeing with the optional framework field. prefixes, when
// set, are the id prefixes the endpoint allows.
func (s *Server) resolveItems(p *rpcerr.Problems, b *measure.Bundle, refs []itemRef, withResults bool, framework *string, prefixes []string) resolved {
	r := resolved{maxScore: len(refs)}
	framework = frameworkName(framework)
	switch {
	case len(refs) == 0:
		p.Add("items", "must hold at least one item")
		return r
	case len(refs) > s.limits.MaxItems:
		p.Add("items", "holds %d items; the limit is %d", len(refs), s.limits.MaxItems)
		return r
	}
	seen := make(map[string]int, len(refs))
	frameworks := map[string]int{}
	var order []string
	r.answers = make([]measure.Answer, 0, len(refs))
	for i, ref := range refs {
		ok := !withResults || checkResult(p, b, i, ref.id, ref.result)
		item, known := checkItemID(p, b, i, ref.id, prefixes, seen)
		if !known {
			continue
		}
		r.maxScore += item.MaxScore() - 1
		if _, counted := frameworks[item.Framework]; !counted {
			order = append(order, item.Framework)
		}
		frameworks[item.Framework]++
		if !ok {
			continue
		}
		a := measure.Answer{Item: item}
		if withResults {
			a.Correct, a.Score = *ref.result == 1, int(*ref.result)
		}
		r.answers = append(r.answers, a)
	}
	switch {
	case len(order) > 1:
		p.Add("", "the items mix frameworks %s; one request scores one framework", strings.Join(order, " and "))
		knownFramework(p, b, framework)
	case len(order) == 1:
		r.fw = s.framework(p, b, order[0], framework)
	default:
		knownFramework(p, b, framework)
	}
	return r
}

// checkResult reports whether items[i]'s result is given and is a score of its item: 0 or 1,
// or 0 to the item's maximum score for a polytomous item of b (id names the item). It says what
// is wrong with it in p, in the item's terms (a score 0 … m of a polytomous item, right or wrong
// of another). The item is looked up only for a result missing or outside 0 … 1, which is every
// item's range, and a result it cannot judge (no such item) is held to 0 or 1, so a request of
// dichotomous items is answered exactly as before partial credit.
func checkResult(p *rpcerr.Problems, b *measure.Bundle, i int, id *string, result *int32) bool {
	switch {
	case result == nil:
		if id != nil {
			if item, known := b.Item(*id); known && item.Polytomous() {
				p.Add(itemPath(i, "result"), "is required (a score from 0 to %d, the maximum score of item %q)", item.MaxScore(), *id)
				return false
			}
		}
		p.Add(itemPath(i, "result"), "is required (1 correct, 0 incorrect)")
		return false
	case *result == 0 || *result == 1:
		return true
	}
	if id != nil {
		if item, known := b.Item(*id); known && item.Polytomous() {
			most := item.MaxScore()
			if *result >= 0 && int(*result) <= most {
				return true
			}
			p.Add(itemPath(i, "result"), "must be 0 … %d (the maximum score of item %q), got %d", most, *id, *result)
			return false
		}
	}
	p.Add(itemPath(i, "result"), "must be 0 or 1, got %d", *result)
	return false
}

// checkItemID finds items[i]'s item in b: its id given, starting with one of prefixes (when
// set), not a repeat of an earlier one (seen maps ids to their index), and known. It says what is
// wrong in p; known is false then.
func checkItemID(p *rpcerr.Problems, b *measure.Bundle, i int, ref *string, prefixes []string, seen map[string]int) (item measure.Item, known bool) {
	if ref == nil || *ref == "" {
		p.Add(itemPath(i, "id"), "is required")
		return item, false
	}
	id := *ref
	if len(prefixes) > 0 && !hasPrefix(id, prefixes) {
		p.Add(itemPath(i, "id"), "%q must start with one of %s", id, strings.Join(prefixes, ", "))
		return item, false
	}
	if first, dup := seen[id]; dup {
		p.Add(itemPath(i, "id"), "%q repeats items[%d].id", id, first)
		return item, false
	}
	seen[id] = i
	item, known = b.Item(id)
	if !known {
		p.Add(itemPath(i, "id"), "unknown item id %q", id)
	}
	return item, known
}

func hasPrefix(id string, prefixes []string) bool {
	for _, pre := range prefixes {
		if strings.HasPrefix(id, pre) {
			return true
		}
	}
	return false
}

// frameworkName is a framework field as the bundle names frameworks: names are matched
// case-insensitively on input ("Lexile" works) and are lower-case on output.
func frameworkName(field *string) *string {
	if field == nil {
		return nil
	}
	name := strings.ToLower(strings.TrimSpace(*field))
	return &name
}

// itemPath is the path of a field of items[i], built only when a problem names it.
func itemPath(i int, field string) string {
	return "items[" + strconv.Itoa(i) + "]." + field
}

// knownFramework checks an optional framework field on its own, when the items cannot say
// which framework the request is in.
func knownFramework(p *rpcerr.Problems, b *measure.Bundle, field *string) {
	if field == nil {
		return
	}
	if _, known := b.Framework(*field); !known {
		p.Add("framework", "unknown framework %q (want %s)", *field, b.FrameworkList())
	}
}

// framework resolves the items' framework and checks the optional framework field against it.
func (s *Server) framework(p *rpcerr.Problems, b *measure.Bundle, itemsFramework string, field *string) *measure.Framework {
	if field != nil && *field != itemsFramework {
		if _, known := b.Framework(*field); !known {
			p.Add("framework", "unknown framework %q (want %s)", *field, b.FrameworkList())
		} else {
			p.Add("", "framework is %q but the items are %s items", *field, itemsFramework)
		}
		return nil
	}
	fw, ok := b.Framework(itemsFramework)
	if !ok {
		p.Add("items", "framework %q of the items is not in the content bundle", itemsFramework)
		return nil
	}
	return fw
}

// numberCorrect checks a raw score, the total of score points, against the n items' maximum
// score most (n when every item is dichotomous).
func numberCorrect(p *rpcerr.Problems, v *int32, n, most int) int {
	switch {
	case v == nil:
		p.Add("numberCorrect", "is required")
	case *v < 0:
		p.Add("numberCorrect", "must be 0 or more, got %d", *v)
	case int(*v) > most && most == n:
		// A rule across two fields: the original API reports those under nonFieldErrors.
		p.Add("", "numberCorrect (%d) is more than the number of items (%d)", *v, n)
	case int(*v) > most:
		p.Add("", "numberCorrect (%d) is more than the items' maximum score (%d points)", *v, most)
	default:
		return int(*v)
	}
	return 0
}

// prior checks the prior fields of the Bayes forms and moves the prior forward to today (§4).
func prior(p *rpcerr.Problems, fw *measure.Framework, ability, uncertainty, days *float64) (measure.Normal, bool) {
	if !measure.CheckPrior(p.Add, "", ability, uncertainty, days) || fw == nil {
		return measure.Normal{}, false
	}
	if *days > 0 && !fw.HasNormCurve() {
		p.Add("elapsedDays", "the bundle has no norm curve for framework %q, so a prior cannot be moved forward (send 0)", fw.Name)
		return measure.Normal{}, false
	}
	return fw.Grow(measure.Normal{Mean: *ability, SD: *uncertainty}, *days), true
}

// gradeAndTime checks the strand endpoints' grade and timeOfYear.
func gradeAndTime(p *rpcerr.Problems, grade *int32, timeOfYear *string) (int, string) {
	g := 0
	switch {
	case grade == nil:
		p.Add("grade", "is required (0 for Kindergarten to 12)")
	case *grade < 0 || *grade > 12:
		p.Add("grade", "must be between 0 (Kindergarten) and 12, got %d", *grade)
	default:
		g = int(*grade)
	}
	t, ok := "", false
	switch {
	case timeOfYear == nil:
		p.Add("timeOfYear", "is required (BOY, MOY or EOY)")
	default:
		if t, ok = measure.TimeOfYear(*timeOfYear); !ok {
			p.Add("timeOfYear", "must be BOY, MOY or EOY, got %q", *timeOfYear)
		}
	}
	return g, t
}
