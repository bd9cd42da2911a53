package scoring

import (
	"context"
	"fmt"
	"log/slog"
	"math"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// Server implements ScoringService on the current content bundle.
type Server struct {
	scoringv1.UnimplementedScoringServiceServer
	content *measure.Live
	limits  Limits
	log     *slog.Logger
	pages   *PageKeys
}

// New returns the scoring service on content, its catalog's page tokens signed with keys of its
// own (random: see WithPageKeys).
func New(content *measure.Live, limits Limits, log *slog.Logger) *Server {
	pages, err := NewPageKeys("")
	if err != nil { // the system's random source failed: nothing can be served safely
		panic(err)
	}
	return &Server{content: content, limits: limits, log: log, pages: pages}
}

// WithPageKeys signs the catalog's page tokens with pages (derived from the keys dir, so that
// every replica reads every other's tokens) and re-derives them at each reload.
func (s *Server) WithPageKeys(pages *PageKeys) *Server {
	s.pages = pages
	return s
}

// Service is the server as the serving frame takes it.
func (s *Server) Service() serve.Service {
	return serve.Service{
		// The scoring paths, and beside them the content catalog on the same bundle.
		Register: func(g grpc.ServiceRegistrar) {
			scoringv1.RegisterScoringServiceServer(g, s)
			scoringv1.RegisterContentServiceServer(g, &Catalog{content: s.content, limits: s.limits, pages: s.pages})
		},
		// The JSON routes: the gateway's on a client of the frame's in-process channel.
		Gateway: func(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
			if err := scoringv1.RegisterScoringServiceHandlerClient(ctx, mux, scoringv1.NewScoringServiceClient(conn)); err != nil {
				return err
			}
			return scoringv1.RegisterContentServiceHandlerClient(ctx, mux, scoringv1.NewContentServiceClient(conn))
		},
		Wire:    WireRules(s.limits),
		Reload:  s.reload,
		Version: s.content.Version,
		// The NDJSON batch (docs/api.md): each record runs as a unary call of its path.
		BatchPath: "/api/score/batch",
		// Its gRPC form, served by the frame the same way: each record a unary call of its rpc.
		BatchRPC: scoringv1.ScoringService_ScoreBatch_FullMethodName,
	}
}

// reload re-reads the content bundle and the page token keys. Its error is the bundle's alone: a
// keys dir that fails to load keeps the page keys in use and is logged here, while the clients
// and keys source (the issuer's reload of the same dir) reports it; joined to the bundle's, it
// would have the operator told that a bundle that was taken was refused.
func (s *Server) reload() (bool, error) {
	changed, err := s.content.Reload()
	if keysErr := s.pages.Reload(); keysErr != nil {
		s.log.Error("reload page token keys: keeping the keys in use", "error", keysErr)
	}
	return changed, err
}

func itemResults(items []*scoringv1.ItemResult) []itemRef {
	refs := make([]itemRef, len(items))
	for i, it := range items {
		refs[i] = itemRef{id: it.Id, result: it.Result}
	}
	return refs
}

func itemIDs(items []*scoringv1.ItemId) []itemRef {
	refs := make([]itemRef, len(items))
	for i, it := range items {
		refs[i] = itemRef{id: it.Id}
	}
	return refs
}

// testOf is the Test of resolved items with a raw score given separately (number-correct forms).
func testOf(r resolved, correct int) measure.Test {
	t := measure.TestOf(r.answers)
	t.Correct = correct
	return t
}

func (s *Server) ScoreItemResults(ctx context.Context, req *scoringv1.ScoreItemResultsRequest) (*scoringv1.Measure, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	r := s.resolveItems(&p, b, itemResults(req.GetItems()), true, req.Framework, nil)
	x := percentileAsked(&p, b, r.fw, req.Grade, req.TimeOfYear).withFit(req.Fit, r.answers)
	if err := p.Err(); err != nil {
		return nil, err
	}
	est, err := r.fw.Standard(measure.TestOf(r.answers))
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.log, "standard estimate", err)
	}
	return s.reply(ctx, r.fw, est, x)
}

func (s *Server) ScoreItemIds(ctx context.Context, req *scoringv1.ScoreItemIdsRequest) (*scoringv1.Measure, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	r := s.resolveItems(&p, b, itemIDs(req.GetItems()), false, req.Framework, nil)
	correct := numberCorrect(&p, req.NumberCorrect, len(req.GetItems()), r.maxScore)
	x := percentileAsked(&p, b, r.fw, req.Grade, req.TimeOfYear)
	if err := p.Err(); err != nil {
		return nil, err
	}
	est, err := r.fw.Standard(testOf(r, correct))
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.log, "standard estimate", err)
	}
	return s.reply(ctx, r.fw, est, x)
}

func (s *Server) ScoreItemResultsBayes(ctx context.Context, req *scoringv1.ScoreItemResultsBayesRequest) (*scoringv1.Measure, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	r := s.resolveItems(&p, b, itemResults(req.GetItems()), true, req.Framework, nil)
	pr, _ := prior(&p, r.fw, req.PriorAbility, req.PriorUncertainty, req.ElapsedDays)
	x := percentileAsked(&p, b, r.fw, req.Grade, req.TimeOfYear).withFit(req.Fit, r.answers)
	if err := p.Err(); err != nil {
		return nil, err
	}
	est, err := r.fw.BayesContext(ctx, measure.TestOf(r.answers), pr)
	if err != nil {
		return nil, s.estimateFailed(ctx, "bayes estimate", err)
	}
	return s.reply(ctx, r.fw, est, x)
}

func (s *Server) ScoreItemIdsBayes(ctx context.Context, req *scoringv1.ScoreItemIdsBayesRequest) (*scoringv1.Measure, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	r := s.resolveItems(&p, b, itemIDs(req.GetItems()), false, req.Framework, b.IDPrefixes())
	correct := numberCorrect(&p, req.NumberCorrect, len(req.GetItems()), r.maxScore)
	pr, _ := prior(&p, r.fw, req.PriorAbility, req.PriorUncertainty, req.ElapsedDays)
	x := percentileAsked(&p, b, r.fw, req.Grade, req.TimeOfYear)
	if err := p.Err(); err != nil {
		return nil, err
	}
	est, err := r.fw.BayesContext(ctx, testOf(r, correct), pr)
	if err != nil {
		return nil, s.estimateFailed(ctx, "bayes estimate", err)
	}
	return s.reply(ctx, r.fw, est, x)
}

func (s *Server) ScoreDifficultiesBayes(ctx context.Context, req *scoringv1.ScoreDifficultiesBayesRequest) (*scoringv1.Measure, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	var fw *measure.Framework
	switch name := frameworkName(req.Framework); {
	case name == nil:
		p.Add("framework", "is required (%s)", b.FrameworkList())
	default:
		var ok bool
		if fw, ok = b.Framework(*name); !ok {
			p.Add("framework", "unknown framework %q (want %s)", req.GetFramework(), b.FrameworkList())
		}
	}
	items := req.GetItems()
	test := measure.Test{Items: make([]measure.Difficulty, 0, len(items))}
	n := 0
	switch {
	case len(items) == 0:
		p.Add("items", "must hold at least one item difficulty")
	case len(items) > s.limits.MaxItems:
		p.Add("items", "holds %d entries; the limit is %d", len(items), s.limits.MaxItems)
	}
	most := 0  // the items' maximum score: n when every item is dichotomous
	steps := 0 // the steps sent, held to the item limit: each costs the estimate what an item does
	for i, it := range items {
		steps += len(it.GetSteps())
		count := int32(1)
		if it.Count != nil {
			count = *it.Count
		}
		d, ok := itemDifficulty(&p, i, it)
		if count < 1 {
			p.Add(fmt.Sprintf("items[%d].count", i), "must be 1 or more, got %d", count)
			ok = false
		}
		if ok {
			d.Count = int(count)
			n += d.Count
			most += d.Count * d.MaxScore()
			test.Items = append(test.Items, d)
		}
	}
	if n > s.limits.MaxItems {
		p.Add("items", "count %d items in all; the limit is %d", n, s.limits.MaxItems)
	}
	if steps > s.limits.MaxItems {
		p.Add("items", "hold %d steps in all; the limit is %d", steps, s.limits.MaxItems)
	}
	test.Correct = numberCorrect(&p, req.NumberCorrect, n, most)
	pr, _ := prior(&p, fw, req.PriorAbility, req.PriorUncertainty, req.ElapsedDays)
	x := percentileAsked(&p, b, fw, req.Grade, req.TimeOfYear)
	if err := p.Err(); err != nil {
		return nil, err
	}
	est, err := fw.BayesContext(ctx, test, pr)
	if err != nil {
		return nil, s.estimateFailed(ctx, "bayes estimate", err)
	}
	return s.reply(ctx, fw, est, x)
}

// itemDifficulty checks items[i] of the difficulties path: a difficulty, or instead the steps
// of a polytomous item (METHOD §13), each a finite measure within the limit. One step is the
// dichotomous item of that difficulty, passed on as a difficulty so that its answer is the
// dichotomous one bit for bit. Count is left to the caller.
func itemDifficulty(p *rpcerr.Problems, i int, it *scoringv1.ItemDifficulty) (measure.Difficulty, bool) {
	steps := it.GetSteps()
	switch {
	case it.Difficulty != nil && len(steps) > 0:
		p.Add(fmt.Sprintf("items[%d]", i), "has both difficulty and steps; give one: difficulty for an item scored right or wrong, steps for an item scored 0 … the number of steps")
		return measure.Difficulty{}, false
	case len(steps) > 0:
		ok := true
		for k, x := range steps {
			if !measure.Finite(x) || math.Abs(x) > measure.MaxAbsMeasure {
				p.Add(fmt.Sprintf("items[%d].steps[%d]", i, k), "must be a number between %d and %d, got %v", -measure.MaxAbsMeasure, measure.MaxAbsMeasure, x)
				ok = false
			}
		}
		switch {
		case !ok:
			return measure.Difficulty{}, false
		case len(steps) == 1:
			return measure.Difficulty{Measure: steps[0]}, true
		}
		return measure.Difficulty{Steps: steps}, true
	case it.Difficulty == nil:
		p.Add(fmt.Sprintf("items[%d].difficulty", i), "is required (or steps, for an item scored in more than two categories)")
		return measure.Difficulty{}, false
	case !measure.Finite(*it.Difficulty) || math.Abs(*it.Difficulty) > measure.MaxAbsMeasure:
		p.Add(fmt.Sprintf("items[%d].difficulty", i), "must be a number between %d and %d, got %v", -measure.MaxAbsMeasure, measure.MaxAbsMeasure, *it.Difficulty)
		return measure.Difficulty{}, false
	}
	return measure.Difficulty{Measure: *it.Difficulty}, true
}

// benchmark finds the strand benchmarks of the items' framework for the grade and time of year.
func benchmark(p *rpcerr.Problems, b *measure.Bundle, fw *measure.Framework, grade int, toy string) measure.Benchmark {
	if fw == nil || toy == "" {
		return measure.Benchmark{}
	}
	bench, ok := b.Benchmark(fw.Name, grade, toy)
	switch {
	case !ok && !b.HasBenchmarks(fw.Name):
		p.Add("grade", "the bundle has no strand benchmarks for framework %q, so strand categories are not available", fw.Name)
	case !ok:
		p.Add("grade", "the content bundle has no %s strand benchmarks for grade %d %s", fw.Name, grade, toy)
	}
	return bench
}

func (s *Server) ScoreScale(ctx context.Context, req *scoringv1.ScoreScaleRequest) (*scoringv1.Measure, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	fw, obs, _ := s.scale(&p, b, req.LinkId, req.ScaleScore, req.ScaleSem)
	x := percentileAsked(&p, b, fw, req.Grade, req.TimeOfYear)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if fw == nil {
		return nil, rpcerr.Fault(ctx, s.log, "link framework", errUnknownFramework(req.GetLinkId()))
	}
	return s.reply(ctx, fw, measure.Estimate{Ability: obs.Mean, Uncertainty: obs.SD}, x)
}

func (s *Server) ScoreScaleBayes(ctx context.Context, req *scoringv1.ScoreScaleBayesRequest) (*scoringv1.Measure, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	fw, obs, _ := s.scale(&p, b, req.LinkId, req.ScaleScore, req.ScaleSem)
	pr, _ := prior(&p, fw, req.PriorAbility, req.PriorUncertainty, req.ElapsedDays)
	x := percentileAsked(&p, b, fw, req.Grade, req.TimeOfYear)
	if err := p.Err(); err != nil {
		return nil, err
	}
	if fw == nil {
		return nil, rpcerr.Fault(ctx, s.log, "link framework", errUnknownFramework(req.GetLinkId()))
	}
	post := measure.Update(pr, obs)
	return s.reply(ctx, fw, measure.Estimate{Ability: post.Mean, Uncertainty: post.SD}, x)
}

func (s *Server) ScoreForm(ctx context.Context, req *scoringv1.ScoreFormRequest) (*scoringv1.Measure, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, s.content)
	var fw *measure.Framework
	var test measure.Test
	n := 0
	switch {
	case req.FormId == nil || req.GetFormId() == "":
		p.Add("formId", "is required")
	default:
		form, ok := b.Form(req.GetFormId())
		if !ok {
			p.Add("formId", "unknown form %q", req.GetFormId())
			break
		}
		if fw, ok = b.Framework(form.Framework); !ok {
			return nil, rpcerr.Fault(ctx, s.log, "form framework", errUnknownFramework(form.Framework))
		}
		for _, id := range form.Items {
			item, ok := b.Item(id)
			if !ok {
				return nil, rpcerr.Fault(ctx, s.log, "form item", errUnknownItem(id))
			}
			d := measure.Difficulty{Measure: item.Difficulty, Count: 1}
			if item.Polytomous() {
				d.Steps = item.Steps
			}
			test.Items = append(test.Items, d)
		}
		n = len(form.Items)
	}
	switch {
	case fw != nil || req.NumberCorrect == nil:
		test.Correct = numberCorrect(&p, req.NumberCorrect, n, test.MaxScore())
	case req.GetNumberCorrect() < 0:
		p.Add("numberCorrect", "must be 0 or more, got %d", req.GetNumberCorrect())
	}
	x := percentileAsked(&p, b, fw, req.Grade, req.TimeOfYear)
	if err := p.Err(); err != nil {
		return nil, err
	}
	est, err := fw.Standard(test)
	if err != nil {
		return nil, rpcerr.Fault(ctx, s.log, "standard estimate", err)
	}
	return s.reply(ctx, fw, est, x)
}
