package scoring

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// Page sizes of the item catalog (docs/api.md, Content catalog).
const (
	defaultPageSize = 500
	maxPageSize     = 5000
)

// Catalog implements ContentService: what the content bundle in force holds, read at each call
// from the same measure.Live the scoring paths use, so a reload shows at once.
type Catalog struct {
	scoringv1.UnimplementedContentServiceServer
	content *measure.Live
	limits  Limits
	pages   *PageKeys
}

// bundleInfo names b, the bundle that answered: where it comes from (a directory by its name
// only, never its path on the server; the embedded bundle's source has no path to cut) and its
// hash, b's own (a reload meanwhile has another).
func (c *Catalog) bundleInfo(b *measure.Bundle) *scoringv1.BundleInfo {
	return &scoringv1.BundleInfo{Source: filepath.Base(c.content.Source()), Hash: b.Hash()}
}

// framework is a required or optional framework named in any case.
func framework(p *rpcerr.Problems, b *measure.Bundle, name *string, required bool) string {
	if name == nil {
		if required {
			p.Add("framework", "is required (%s)", b.FrameworkList())
		}
		return ""
	}
	fw := strings.ToLower(strings.TrimSpace(*name))
	if _, ok := b.Framework(fw); !ok {
		p.Add("framework", "unknown framework %q (want %s)", *name, b.FrameworkList())
		return ""
	}
	return fw
}

func (c *Catalog) ListItems(ctx context.Context, req *scoringv1.ListItemsRequest) (*scoringv1.ListItemsResponse, error) {
	var p rpcerr.Problems
	programs := programsOf(ctx)
	b := c.content.Bundle().View(programs)
	fw := framework(&p, b, req.Framework, true)
	q := measure.ItemQuery{Framework: fw, Strand: req.GetStrand(), IDs: req.GetIds(), Limit: defaultPageSize}
	if req.Strand != nil && fw != "" {
		strands, _ := b.Strands(fw)
		if !slices.Contains(strands, q.Strand) {
			p.Add("strand", "unknown %s strand %q (the framework's strands: %s)", fw, q.Strand, strings.Join(strands, ", "))
		}
	}
	scoringFilters(&p, req, &q)
	if n := len(req.GetIds()); n > c.limits.MaxItems {
		p.Add("ids", "holds %d ids; the limit is %d", n, c.limits.MaxItems)
	}
	if v := req.PageSize; v != nil {
		if *v < 1 || *v > maxPageSize {
			p.Add("pageSize", "must be between 1 and %d, got %d", maxPageSize, *v)
		}
		q.Limit = int(*v)
	}
	if tok := req.GetPageToken(); tok != "" {
		after, ok := c.pages.decode(req, programs, tok)
		if !ok {
			p.Add("pageToken", "is not a page token this service wrote for this query: send the nextPageToken of the previous page with the same framework, strand and filters, or none for the first")
		}
		q.After = after
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	page := b.Items(q)
	out := &scoringv1.ListItemsResponse{
		Items:      make([]*scoringv1.CatalogItem, len(page.Items)),
		Bundle:     c.bundleInfo(b),
		ApiVersion: serve.Version,
	}
	for i, it := range page.Items {
		ci := &scoringv1.CatalogItem{Id: it.ID, Framework: it.Framework, Strand: it.Strand, Difficulty: it.Difficulty, MaxScore: int32(it.MaxScore())}
		if it.Polytomous() {
			ci.Steps = it.Steps
		}
		out.Items[i] = ci
	}
	if page.More {
		out.NextPageToken = c.pages.encode(req, programs, page.Items[len(page.Items)-1].ID)
	}
	return out, nil
}

func (c *Catalog) ListForms(ctx context.Context, req *scoringv1.ListFormsRequest) (*scoringv1.ListFormsResponse, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, c.content)
	fw := framework(&p, b, req.Framework, false)
	if err := p.Err(); err != nil {
		return nil, err
	}
	forms := b.Forms(fw)
	out := &scoringv1.ListFormsResponse{Forms: make([]*scoringv1.CatalogForm, len(forms)), Bundle: c.bundleInfo(b), ApiVersion: serve.Version}
	for i, f := range forms {
		out.Forms[i] = &scoringv1.CatalogForm{Form: f.ID, Framework: f.Framework, Items: f.Items}
	}
	return out, nil
}

func (c *Catalog) ListLinks(ctx context.Context, _ *scoringv1.ListLinksRequest) (*scoringv1.ListLinksResponse, error) {
	b := bundleOf(ctx, c.content)
	links := b.Links()
	out := &scoringv1.ListLinksResponse{Links: make([]*scoringv1.CatalogLink, len(links)), Bundle: c.bundleInfo(b), ApiVersion: serve.Version}
	for i, l := range links {
		out.Links[i] = &scoringv1.CatalogLink{LinkId: l.ID, Framework: l.Framework, MinScore: l.Min, MaxScore: l.Max}
	}
	return out, nil
}

func (c *Catalog) ListStrands(ctx context.Context, req *scoringv1.ListStrandsRequest) (*scoringv1.ListStrandsResponse, error) {
	var p rpcerr.Problems
	b := bundleOf(ctx, c.content)
	fw := framework(&p, b, req.Framework, true)
	if err := p.Err(); err != nil {
		return nil, err
	}
	strands, _ := b.Strands(fw)
	return &scoringv1.ListStrandsResponse{Strands: strands, Framework: fw, Bundle: c.bundleInfo(b), ApiVersion: serve.Version}, nil
}
