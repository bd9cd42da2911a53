package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/yardstick-dev/yardstick/pkg/serve/ndjson"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// job is one input record on its way to the output.
type job struct {
	seq   int    // among the records sent (round robin over the streams)
	line  int    // the record's line in the input file
	id    []byte // the id's JSON string token
	send  []byte // the record line to send, without its newline
	local bool   // answered here, not sent: a line the service would refuse

	// The answer, set before done is closed.
	status int
	body   []byte // the answer's body
	raw    []byte // the service's answer line, verbatim (without newline); nil for local answers
	done   chan struct{}
}

// stats are the counters progress shows.
type stats struct {
	read, sent, ok, failed, reconnects atomic.Int64
}

// readInput reads the records and hands each to emit in input order, after the first skip
// (answered by an earlier run).
func readInput(ctx context.Context, c config, in io.Reader, skip int, emit func(*job) error, st *stats) error {
	seen, seq := 0, 0
	skipping := func(j *job) error {
		if seen++; seen <= skip {
			return nil
		}
		if !j.local {
			j.seq = seq // round robin over the records sent
			seq++
		}
		return emit(j)
	}
	if c.in == "csv" {
		return readCSV(ctx, c, in, skipping, st)
	}
	return readNDJSON(ctx, in, skipping, st)
}

func newJob(line int) *job { return &job{line: line, done: make(chan struct{})} }

// check makes j the record line rec, or a local answer with the engine's own status and body
// when the engine would refuse the line: it would answer it by a line number that means
// nothing to the caller of a resumed or parallel stream.
func (j *job) check(rec []byte) {
	if len(rec) > ndjson.DefaultMaxLine {
		j.local, j.status, j.body = true, http.StatusRequestEntityTooLarge, ndjson.TooLargeAnswer()
		return
	}
	r, err := ndjson.ParseRecord(rec)
	if err != nil {
		j.local = true
		j.status, j.body = ndjson.ErrorAnswer(err)
		return
	}
	j.id, j.send = r.ID, bytes.Clone(rec)
}

func readNDJSON(ctx context.Context, in io.Reader, emit func(*job) error, st *stats) error {
	lr := ndjson.NewLineReader(in, ndjson.DefaultMaxLine)
	for {
		line, num, tooLong, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the records: %w", err)
		}
		if !tooLong && ndjson.Blank(line) {
			continue
		}
		j := newJob(num)
		if tooLong {
			j.local, j.status, j.body = true, http.StatusRequestEntityTooLarge, ndjson.TooLargeAnswer()
		} else {
			j.check(line)
		}
		st.read.Add(1)
		if err := emit(j); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
}

// readCSV reads a header row, then one record a row: the id column, the path column (or
// -path), and either a body column holding the request's JSON object or every other column as
// a field of the request: a cell that is a JSON number, true, false, an array or an object is
// sent as that JSON value, an empty cell is left out, anything else is a string.
func readCSV(ctx context.Context, c config, in io.Reader, emit func(*job) error, st *stats) error {
	r := csv.NewReader(in)
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("reading the CSV header: %w", err)
	}
	idCol, pathCol, bodyCol := -1, -1, -1
	names := make([]string, len(header))
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF"))
		names[i] = h
		switch h {
		case "id":
			idCol = i
		case "path":
			pathCol = i
		case "body":
			bodyCol = i
		}
	}
	if idCol < 0 {
		return fmt.Errorf("the CSV header %q has no id column", header)
	}
	if pathCol < 0 && c.path == "" {
		return fmt.Errorf("the CSV header %q has no path column: give -path", header)
	}
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := r.FieldPos(0)
		j := newJob(line)
		var perr *csv.ParseError
		switch {
		case errors.As(err, &perr) && errors.Is(perr.Err, csv.ErrFieldCount):
			j.local = true
			j.status, j.body = ndjson.ErrorAnswer(rpcerr.Invalid("", "the row has %d fields; the header has %d", len(row), len(header)))
			j.line = perr.StartLine
		case err != nil:
			return fmt.Errorf("reading the CSV: %w", err)
		default:
			j.check(csvRecord(c, names, row, idCol, pathCol, bodyCol))
		}
		st.read.Add(1)
		if err := emit(j); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
}

// csvRecord is the record line of a row (which check then judges as the engine would).
func csvRecord(c config, names, row []string, idCol, pathCol, bodyCol int) []byte {
	path := c.path
	if pathCol >= 0 && row[pathCol] != "" {
		path = row[pathCol]
	}
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.Write(jsonString(row[idCol]))
	b.WriteString(`,"path":`)
	b.Write(jsonString(path))
	b.WriteString(`,"body":`)
	if bodyCol >= 0 {
		b.WriteString(row[bodyCol]) // the engine's check says if it is not a JSON object
	} else {
		b.WriteByte('{')
		first := true
		for i, cell := range row {
			if i == idCol || i == pathCol || cell == "" {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.Write(jsonString(names[i]))
			b.WriteByte(':')
			b.Write(cellValue(cell))
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes()
}

// cellValue is a CSV cell as a JSON value: itself when it is a JSON number, boolean, array or
// object; else a string ("007" and "BOY" stay strings).
func cellValue(cell string) []byte {
	t := strings.TrimSpace(cell)
	if t != "" && json.Valid([]byte(t)) && t != "null" && t[0] != '"' {
		return []byte(t)
	}
	return jsonString(cell)
}

func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string: cannot fail
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
