package scoring

import (
	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// maxCatalogScore bounds the maxScore filter: an item's maximum score is its number of steps, and
// no bank scores an item in more than a hundred categories.
const maxCatalogScore = 100

// scoringFilters reads the item catalog's filters of scoring into q: maxScore (exact) and
// partialCredit (scored in more than two categories, or right or wrong). A pair that no item can
// pass is a problem, not an empty page: the caller has mistyped one of them.
func scoringFilters(p *rpcerr.Problems, req *scoringv1.ListItemsRequest, q *measure.ItemQuery) {
	if v := req.MaxScore; v != nil {
		if *v < 1 || *v > maxCatalogScore {
			p.Add("maxScore", "must be between 1 (an item scored right or wrong) and %d, got %d", maxCatalogScore, *v)
		}
		q.MaxScore = int(*v)
	}
	if v := req.PartialCredit; v != nil {
		q.PartialCredit = v
		if req.MaxScore != nil && *req.MaxScore >= 1 && (*req.MaxScore >= 2) != *v {
			p.Add("", "maxScore %d and partialCredit %v select no item: partial credit items have a maximum score of 2 or more", *req.MaxScore, *v)
		}
	}
}
