package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// writeOutput writes each job's answer in input order, waiting for the one whose turn it is.
// NDJSON: the service's answer line verbatim, {"line": N, "status", "body"} for a line answered
// here (N the input's line), and the summary line last, as the service writes it. CSV: line, id,
// status, body.
// An earlier run's answers (before) count in the summary.
func writeOutput(ctx context.Context, c config, out io.Writer, order <-chan *job, before done, st *stats) error {
	w := bufio.NewWriterSize(out, 64<<10)
	var cw *csv.Writer
	if c.out == "csv" {
		cw = csv.NewWriter(w)
		if !before.header {
			_ = cw.Write([]string{"line", "id", "status", "body"})
		}
	}
	records, ok := before.records, before.ok
	for j := range order {
		select {
		case <-j.done:
		default:
			// Nothing to write until this answer comes: what was written goes out meanwhile.
			if cw != nil {
				cw.Flush()
			}
			if err := w.Flush(); err != nil {
				return err
			}
			select {
			case <-j.done:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		records++
		if j.status == 200 {
			ok++
		}
		if j.local {
			if j.status == 200 {
				st.ok.Add(1)
			} else {
				st.failed.Add(1)
			}
		}
		if cw != nil {
			id := ""
			if j.id != nil {
				_ = json.Unmarshal(j.id, &id) // the engine's check made it a JSON string
			}
			if err := cw.Write([]string{strconv.Itoa(j.line), id, strconv.Itoa(j.status), string(j.body)}); err != nil {
				return err
			}
			continue
		}
		var err error
		if j.raw != nil {
			_, err = fmt.Fprintf(w, "%s\n", j.raw)
		} else {
			_, err = fmt.Fprintf(w, `{"line":%d,"status":%d,"body":%s}`+"\n", j.line, j.status, j.body)
		}
		if err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if cw == nil {
		fmt.Fprintf(w, `{"summary":{"records":%d,"ok":%d,"failed":%d}}`+"\n", records, ok, records-ok)
	} else {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	}
	return w.Flush()
}
