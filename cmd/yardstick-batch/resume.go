package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// done is what an earlier run left in the output file: its answers are in input order, so the
// first records answered are exactly the first records of the input, whatever -parallel was.
type done struct {
	records, ok int   // answer lines (rows) complete in the file, and those with status 200
	complete    bool  // the NDJSON summary line is there: nothing is left to do
	header      bool  // a CSV file already has its header
	keep        int64 // bytes of whole lines: a line cut by the end of the earlier run goes
}

// openResumed opens the output file of an earlier run for appending, after its last whole
// answer, and says how many records it answered.
func openResumed(c config) (*os.File, done, error) {
	f, err := os.OpenFile(c.output, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, done{}, err
	}
	d, err := scanDone(f, c.out)
	if err == nil {
		err = f.Truncate(d.keep)
	}
	if err == nil {
		_, err = f.Seek(d.keep, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, done{}, fmt.Errorf("resuming %s: %w", c.output, err)
	}
	return f, d, nil
}

func scanDone(f io.Reader, format string) (done, error) {
	var d done
	r := bufio.NewReaderSize(f, 64<<10)
	var whole bytes.Buffer // the whole lines, for CSV, whose rows the csv package reads
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			break // a last line without its newline was cut: it goes
		}
		if err != nil {
			return d, err
		}
		d.keep += int64(len(line))
		if format == "csv" {
			whole.Write(line)
			continue
		}
		var a answerLine
		if err := json.Unmarshal(line, &a); err != nil {
			return d, fmt.Errorf("line %d is not an answer: %w", d.records+1, err)
		}
		if a.Summary != nil {
			d.complete = true
			continue
		}
		d.records++
		if a.Status == 200 {
			d.ok++
		}
	}
	if format == "csv" && whole.Len() > 0 {
		cr := csv.NewReader(&whole)
		cr.FieldsPerRecord = -1 // an earlier version wrote four columns, this one more
		rows, err := cr.ReadAll()
		if err != nil {
			return d, err
		}
		d.header = true
		for _, row := range rows[1:] {
			d.records++
			if len(row) >= 4 && row[2] == strconv.Itoa(200) {
				d.ok++
			}
		}
	}
	return d, nil
}
