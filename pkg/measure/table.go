package measure

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// row is one data line of a bundle file, with its position for error messages.
type row struct {
	file   string
	line   int
	fields map[string]string
}

// problems collects every content error found, each as "file:line: reason".
type problems struct {
	errs []error
	all  bool // report every problem, not at most maxProblems (yardstick-content check)
}

// maxProblems caps the list: a wholly broken file should not produce a million-line error.
const maxProblems = 50

// atColumn records a problem at a line and column of file (the operator files the calibration
// reads).
func (p *problems) atColumn(file string, line, col int, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s:%d:%d: %s", file, line, col, fmt.Sprintf(format, args...)))
}

func (p *problems) add(file string, line int, format string, args ...any) {
	loc := file
	if line > 0 {
		loc = fmt.Sprintf("%s:%d", file, line)
	}
	p.errs = append(p.errs, fmt.Errorf("%s: %s", loc, fmt.Sprintf(format, args...)))
}

func (p *problems) at(r row, format string, args ...any) { p.add(r.file, r.line, format, args...) }

func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	if len(p.errs) > maxProblems && !p.all {
		more := len(p.errs) - maxProblems
		p.errs = append(p.errs[:maxProblems], fmt.Errorf("... and %d more problems", more))
	}
	return errors.Join(p.errs...)
}

// readTable parses a CSV file whose first non-comment line must be exactly header. Lines
// starting with # are comments. It reports header and column-count problems itself and returns
// the rows that have the right number of columns.
func readTable(p *problems, file string, data []byte, header []string) []row {
	return readTableWith(p, file, data, header, nil)
}

// readTableWith is readTable for a file whose header may also end with optional columns: any
// of them, each once, in the order listed (a bundle written before a column existed still
// reads). Under such a header a row may leave out optional columns at its end (a row written for
// the shorter header still reads); a field left out, or of an optional column the header lacks,
// reads as "".
func readTableWith(p *problems, file string, data []byte, header, optional []string) []row {
	least := len(header)
	r := csv.NewReader(strings.NewReader(string(data)))
	r.Comment = '#'
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	head, err := r.Read()
	if err == io.EOF {
		p.add(file, 0, "empty file; want the header %q", strings.Join(header, ","))
		return nil
	}
	if err != nil {
		p.add(file, 0, "%s", csvReason(err))
		return nil
	}
	line, _ := r.FieldPos(0)
	got, ok := headerWith(trimAll(head), header, optional)
	switch {
	case ok:
		header = got
	case len(optional) > 0:
		p.add(file, line, "header %q; want %q (the last %d optional)", strings.Join(head, ","),
			strings.Join(append(slices.Clip(header), optional...), ","), len(optional))
		return nil
	default:
		p.add(file, line, "header %q; want %q", strings.Join(head, ","), strings.Join(header, ","))
		return nil
	}
	var rows []row
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				p.add(file, pe.Line, "%s", pe.Err)
			} else {
				p.add(file, 0, "%s", err)
			}
			return rows
		}
		line, _ := r.FieldPos(0)
		switch {
		case len(rec) == len(header):
		case least < len(header) && len(rec) >= least && len(rec) < len(header):
		case least < len(header):
			p.add(file, line, "%d columns; want %d to %d (%s)", len(rec), least, len(header), strings.Join(header, ","))
			continue
		default:
			p.add(file, line, "%d columns; want %d (%s)", len(rec), len(header), strings.Join(header, ","))
			continue
		}
		fields := make(map[string]string, len(header))
		for i, h := range header {
			if i < len(rec) {
				fields[h] = strings.TrimSpace(rec[i])
			}
		}
		rows = append(rows, row{file: file, line: line, fields: fields})
	}
}

// headerWith matches a file's header: the required columns, then a subsequence of optional.
func headerWith(head, header, optional []string) ([]string, bool) {
	if len(head) < len(header) || !slices.Equal(head[:len(header)], header) {
		return nil, false
	}
	next := 0
	for _, col := range head[len(header):] {
		k := slices.Index(optional[next:], col)
		if k < 0 {
			return nil, false
		}
		next += k + 1
	}
	return head, true
}

func csvReason(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d: %v", pe.Line, pe.Err)
	}
	return err.Error()
}

func trimAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.TrimSpace(s)
	}
	return out
}

// text returns a required non-empty text column.
func (p *problems) text(r row, col string) (string, bool) {
	v := r.fields[col]
	if v == "" {
		p.at(r, "%s is empty", col)
		return "", false
	}
	return v, true
}

// number returns a finite number column.
func (p *problems) number(r row, col string) (float64, bool) {
	v := r.fields[col]
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		p.at(r, "%s %q is not a number", col, v)
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		p.at(r, "%s %q is not a finite number", col, v)
		return 0, false
	}
	return f, true
}

// grade returns a grade column (0..12).
func (p *problems) grade(r row, col string) (int, bool) {
	v := r.fields[col]
	g, err := strconv.Atoi(v)
	if err != nil || g < 0 || g >= Grades {
		p.at(r, "%s %q is not a grade 0-12", col, v)
		return 0, false
	}
	return g, true
}

// timeOfYear returns the time_of_year column: BOY, MOY or EOY, exactly as written.
func (p *problems) timeOfYear(r row) (string, bool) {
	tod := r.fields["time_of_year"]
	if !slices.Contains(timesOfYear, tod) {
		p.at(r, "time_of_year %q is not BOY, MOY or EOY", tod)
		return tod, false
	}
	return tod, true
}
