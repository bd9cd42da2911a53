package measure

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Missing marks a response that was not administered (a blank cell): booklet designs, where each
// person takes some of the items, are the normal case for calibration data.
const Missing int8 = -1

// MaxCellScore is the highest score a cell may hold: an item scored 0 … 100 is already far beyond
// any rubric or rating scale, and the cost of a calibration grows with the total of the scores.
const MaxCellScore int8 = 100

// Responses is a persons × items response matrix: the input of Calibrate (§10, §13).
type Responses struct {
	Items   []string // item ids, in column order
	Persons []string // person ids, in row order
	// Cells[person][item]: the score 0 … MaxCellScore (1 right and 0 wrong for a dichotomous item),
	// or Missing (not administered).
	Cells [][]int8
}

// ReadResponses reads a response matrix in CSV: a header `person,<item id>,…`, then one row per
// person whose cells are scores (whole numbers 0 … MaxCellScore: 1 or 0 for a dichotomous item) or
// empty (not administered). Fields are trimmed; lines starting
// with # are comments; a UTF-8 byte-order mark is skipped. name labels the problems, each reported
// as "name:line:column: reason" (up to 50, joined); on any problem no Responses is returned.
func ReadResponses(r io.Reader, name string) (*Responses, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1 // counted here, to name the line and the expected count
	var p problems
	at := func(line, col int, format string, args ...any) { p.atColumn(name, line, col, format, args...) }
	head, err := csvHeader(cr, name, "a header person,<item id>,…")
	if err != nil {
		return nil, err
	}
	res := &Responses{}
	itemCol := map[string]int{}
	for i, h := range head {
		h = strings.TrimSpace(h)
		line, col := cr.FieldPos(i)
		switch {
		case i == 0:
			if h != "person" {
				at(line, col, "first header field %q; want \"person\"", h)
			}
			continue
		case h == "":
			at(line, col, "item id in header column %d is empty", i+1)
		case itemCol[h] > 0:
			at(line, col, "duplicate item id %q (first in column %d)", h, itemCol[h])
		default:
			itemCol[h] = i + 1
		}
		res.Items = append(res.Items, h)
	}
	if len(head) < 2 {
		line, col := cr.FieldPos(0)
		at(line, col, "header has no item columns; want person,<item id>,…")
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	personLine := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			p.errs = append(p.errs, csvProblem(name, err))
			break // the reader cannot resynchronise after a quoting error
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(head) {
			at(line, 1, "%d fields; want %d (person and %d items, as the header)", len(rec), len(head), len(res.Items))
			continue
		}
		id := strings.TrimSpace(rec[0])
		switch first, dup := personLine[id]; {
		case id == "":
			at(line, 1, "person id is empty")
		case dup:
			at(line, 1, "duplicate person %q (first at line %d)", id, first)
		default:
			personLine[id] = line
		}
		cells := make([]int8, len(res.Items))
		for i, v := range rec[1:] {
			x, ok := parseScore(strings.TrimSpace(v))
			if !ok {
				l, c := cr.FieldPos(i + 1)
				at(l, c, "response %q to item %s is not a score 0 … %d or empty", v, res.Items[i], MaxCellScore)
			}
			cells[i] = x
		}
		res.Persons = append(res.Persons, id)
		res.Cells = append(res.Cells, cells)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if len(res.Persons) == 0 {
		return nil, fmt.Errorf("%s: no persons after the header", name)
	}
	return res, nil
}

// parseScore reads a cell: "" is Missing, else digits only (no sign, point or exponent: a score
// is counted, never measured) with a value of at most MaxCellScore.
func parseScore(v string) (int8, bool) {
	switch v {
	case "":
		return Missing, true
	case "0": // the dichotomous cells, without the loop
		return 0, true
	case "1":
		return 1, true
	}
	if len(v) > 3 {
		return 0, false
	}
	x := 0
	for _, c := range []byte(v) {
		if c < '0' || c > '9' {
			return 0, false
		}
		x = 10*x + int(c-'0')
	}
	if x > int(MaxCellScore) {
		return 0, false
	}
	return int8(x), true
}

// csvHeader reads an operator CSV's header row (a byte-order mark dropped); want says which header,
// for the message about an empty file.
func csvHeader(cr *csv.Reader, name, want string) ([]string, error) {
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file; want %s", name, want)
	}
	if err != nil {
		return nil, csvProblem(name, err)
	}
	if len(head) > 0 {
		head[0] = strings.TrimPrefix(head[0], "\ufeff")
	}
	return head, nil
}

// csvProblem renders an encoding/csv error as "name:line:column: reason".
func csvProblem(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d:%d: %v", name, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}
