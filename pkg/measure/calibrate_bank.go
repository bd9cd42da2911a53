package measure

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DefaultStrand is the strand of calibrated items when no strands are given.
const DefaultStrand = "all"

// BankJob asks CalibrateBank for new bank items from response data.
type BankJob struct {
	Responses *Responses
	Framework string  // framework of the new items, one of Base's
	Base      *Bundle // the bundle the items join: the anchor bundle, or Demo()
	// Anchored: the items of the data that Base already holds (of Framework) are anchors and fix
	// the shift by mean-mean linking. Otherwise Mean is the calibrated items' mean difficulty.
	Anchored bool
	Mean     float64
	Strands  map[string]string // item id → strand for the new items; nil: DefaultStrand for all
	Options  CalibrateOptions
}

// BankReport is the calibration report (JSON as written by yardstick-calibrate -report).
type BankReport struct {
	// Model is "pcm" or "rsm" for a polytomous calibration; absent for the Rasch model, whose
	// report is as it always was.
	Model      string        `json:"model,omitempty"`
	Items      []ReportItem  `json:"items"`
	Dropped    []DroppedItem `json:"dropped"`
	Anchors    []Anchor      `json:"anchors"`
	Persons    int           `json:"persons"`
	Iterations int           `json:"iterations"`
}

// ReportItem is one calibrated item of a BankReport: logit and se in logits (sum-zero CML; a
// polytomous item's location), the fit mean squares, the persons used who answered it, and
// difficulty on the framework's scale; a polytomous item's steps beside them.
type ReportItem struct {
	ID         string       `json:"id"`
	Logit      float64      `json:"logit"`
	SE         float64      `json:"se"`
	Steps      []ReportStep `json:"steps,omitempty"`
	Infit      float64      `json:"infitMnsq"`
	Outfit     float64      `json:"outfitMnsq"`
	N          int          `json:"n"`
	Difficulty float64      `json:"difficulty"`
}

// ReportStep is one step of a polytomous item: logit on the item's identification, se as eRm's
// se.thresh (METHOD §13), difficulty on the framework's scale.
type ReportStep struct {
	Logit      float64 `json:"logit"`
	SE         float64 `json:"se"`
	Difficulty float64 `json:"difficulty"`
}

// CalibrateBank calibrates the items of job.Responses (Calibrate), puts them on the framework's
// scale (anchors or target mean, §10) and returns the report and the new bank items: the
// calibrated items that are not anchors, with their strands. An item id that Base already holds
// and that is not an anchor (any id, without anchoring) is an error, found before any estimation,
// as are strands for unknown items and new items without a strand.
func CalibrateBank(ctx context.Context, job BankJob) (*BankReport, []Item, error) {
	if job.Responses == nil || job.Base == nil {
		return nil, nil, errors.New("calibrate: no responses or no base bundle")
	}
	f, ok := job.Base.Framework(job.Framework)
	if !ok {
		return nil, nil, fmt.Errorf("the bundle has no framework %q (it has %s)", job.Framework, strings.Join(job.Base.Stats().Frameworks, ", "))
	}
	bank := map[string]float64{}
	var errs []error
	var otherFramework, taken []string
	inData := map[string]bool{}
	for _, id := range job.Responses.Items {
		inData[id] = true
		it, held := job.Base.Item(id)
		switch {
		case !held:
		case job.Anchored && it.Framework == job.Framework:
			bank[id] = it.Difficulty
		case job.Anchored:
			otherFramework = append(otherFramework, id)
		default:
			taken = append(taken, id)
		}
	}
	if len(otherFramework) > 0 {
		errs = append(errs, fmt.Errorf("%d items of the data are items of another framework than %s in the anchor bundle: %s", len(otherFramework), job.Framework, idList(otherFramework)))
	}
	if len(taken) > 0 {
		errs = append(errs, fmt.Errorf("%d item ids of the data are already in the bundle: %s (give new items new ids, or anchor on a bundle that holds them)", len(taken), idList(taken)))
	}
	if job.Anchored && len(bank) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("no item of the data is a %s item of the anchor bundle; anchor on a bundle that holds some of them, or give a target mean", job.Framework))
	}
	if job.Strands != nil {
		var unknown []string
		for _, id := range sortedKeys(job.Strands) {
			if !inData[id] {
				unknown = append(unknown, id)
			}
		}
		if len(unknown) > 0 {
			errs = append(errs, fmt.Errorf("strands: %d items are not in the response data: %s", len(unknown), idList(unknown)))
		}
		var missing []string
		for _, id := range job.Responses.Items {
			if _, anchor := bank[id]; !anchor && job.Strands[id] == "" {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("strands: no strand for %d new items: %s", len(missing), idList(missing)))
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	cal, err := Calibrate(ctx, job.Responses, job.Options)
	if err != nil {
		return nil, nil, err
	}
	var sc *Scaled
	if job.Anchored {
		sc, err = cal.OnScaleAnchors(f, bank)
		if err != nil {
			return nil, nil, fmt.Errorf("every anchor was dropped (%s): %w", droppedSummary(cal.Dropped), err)
		}
	} else if sc, err = cal.OnScaleMean(f, job.Mean); err != nil {
		return nil, nil, err
	}
	if err := checkAnchorSteps(job.Base, cal, bank); err != nil {
		return nil, nil, err
	}
	rep := &BankReport{Items: []ReportItem{}, Dropped: cal.Dropped, Anchors: sc.Anchors, Persons: cal.Persons, Iterations: cal.Iterations}
	if cal.Model != ModelRasch {
		rep.Model = cal.Model
	}
	if rep.Dropped == nil {
		rep.Dropped = []DroppedItem{}
	}
	if rep.Anchors == nil {
		rep.Anchors = []Anchor{}
	}
	var items []Item
	for k, it := range cal.Items {
		ri := ReportItem{ID: it.ID, Logit: it.Logit, SE: it.SE, Infit: it.Infit,
			Outfit: it.Outfit, N: it.N, Difficulty: sc.Difficulty[k]}
		var steps []float64
		if it.Steps != nil {
			steps = sc.Steps[k]
			for h, st := range it.Steps {
				ri.Steps = append(ri.Steps, ReportStep{Logit: st.Logit, SE: st.SE, Difficulty: steps[h]})
			}
		}
		rep.Items = append(rep.Items, ri)
		if _, anchor := bank[it.ID]; anchor {
			continue
		}
		strand := DefaultStrand
		if job.Strands != nil {
			strand = job.Strands[it.ID]
		}
		items = append(items, Item{ID: it.ID, Framework: job.Framework, Strand: strand, Difficulty: sc.Difficulty[k], Steps: steps})
	}
	return rep, items, nil
}

// checkAnchorSteps refuses anchors scored differently in the bank and in the data: a location
// (the mean of the steps) of an item scored 0–3 is not comparable with one of the same item
// calibrated 0–2 because nobody in the data scored 3, so mean-mean linking on it would be wrong.
func checkAnchorSteps(base *Bundle, cal *Calibration, bank map[string]float64) error {
	var errs []error
	for _, it := range cal.Items {
		if _, anchor := bank[it.ID]; !anchor {
			continue
		}
		held, _ := base.Item(it.ID)
		inBank, inData := max(len(held.Steps), 1), max(len(it.Steps), 1)
		if inBank != inData {
			errs = append(errs, fmt.Errorf("anchor %s is scored 0–%d in the bank but 0–%d in the data (its highest score there): its location is not comparable; take it out of the data or give it a new id", it.ID, inBank, inData))
		}
	}
	return errors.Join(errs...)
}

// idList shows up to 10 ids, then how many more.
func idList(ids []string) string {
	if len(ids) <= 10 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:10], ", "), len(ids)-10)
}

// ReadItemStrands reads a strands file: a header `id,strand`, then one row per item. Fields are
// trimmed; lines starting with # are comments. Problems are reported as "name:line:column:
// reason" (up to 50, joined).
func ReadItemStrands(r io.Reader, name string) (map[string]string, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	var p problems
	at := func(line, col int, format string, args ...any) { p.atColumn(name, line, col, format, args...) }
	head, err := csvHeader(cr, name, "the header id,strand")
	if err != nil {
		return nil, err
	}
	if strings.Join(trimAll(head), ",") != "id,strand" {
		line, col := cr.FieldPos(0)
		return nil, fmt.Errorf("%s:%d:%d: header %q; want \"id,strand\"", name, line, col, strings.Join(head, ","))
	}
	strands := map[string]string{}
	lines := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			p.errs = append(p.errs, csvProblem(name, err))
			break
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != 2 {
			at(line, 1, "%d fields; want 2 (id,strand)", len(rec))
			continue
		}
		id, strand := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		switch first, dup := lines[id]; {
		case id == "":
			at(line, 1, "item id is empty")
		case dup:
			at(line, 1, "duplicate item %q (first at line %d)", id, first)
		case strand == "":
			_, col := cr.FieldPos(1)
			at(line, col, "strand of item %s is empty", id)
		default:
			lines[id] = line
			strands[id] = strand
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return strands, nil
}
