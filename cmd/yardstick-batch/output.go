package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// writeOutput writes each job's answer in input order, waiting for the one whose turn it is.
// NDJSON: the service's answer line verbatim, {"line": N, "status", "body"} for a line answered
// here (N the input's line), and the summary line last, as the service writes it. CSV: line, id,
// status, body.
// An earlier run's answers (before) count in the summary.
// tally, once it returns without an error, holds the records answered and those answered 200
// (an earlier run's included).
func writeOutput(ctx context.Context, c config, out io.Writer, order <-chan *job, before done, st *stats, tally *counts) error {
	w := bufio.NewWriterSize(out, 64<<10)
	var cw *csv.Writer
	if c.out == "csv" {
		cw = csv.NewWriter(w)
		if !before.header {
			_ = cw.Write(csvHeader)
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
			if err := cw.Write(csvRow(j.line, id, j.status, j.body)); err != nil {
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
	if err := w.Flush(); err != nil {
		return err
	}
	tally.records, tally.ok = records, ok
	return nil
}

// counts are the records answered and those answered 200.
type counts struct{ records, ok int }

// csvHeader is the CSV answer's header: the first four columns are the answer as it came; the
// rest flatten it for a spreadsheet.
var csvHeader = []string{"line", "id", "status", "body", "ability", "abilityDisplay", "uncertainty", "framework", "percentile",
	"reachElapsedDays", "reachGrade", "reachTimeOfYear", "reachAbility", "reachProbability", "peakElapsedDays", "peakProbability",
	"exceptionType", "error"}

// csvRow is one answer as a CSV row: line, id, status, the body as sent, then the measure's
// fields (numbers as the service wrote them; empty when the answer has none) and, for a record
// that failed, its exceptionType and its problems ("field: message; …", else its
// additionalInfo).
func csvRow(line int, id string, status int, body []byte) []string {
	var a struct {
		Ability, AbilityDisplay, Uncertainty, Framework, Percentile json.RawMessage
		// A plan's: when the target is reached (its window) and the best odds of the horizon.
		Reach                         struct{ ElapsedDays, Grade, TimeOfYear, Ability, Probability json.RawMessage }
		Peak                          struct{ ElapsedDays, Probability json.RawMessage }
		ExceptionType, AdditionalInfo string
		ValidationErrors              map[string][]string
	}
	_ = json.Unmarshal(body, &a) // an answer that is not an object leaves every column empty
	row := []string{strconv.Itoa(line), id, strconv.Itoa(status), string(body),
		scalar(a.Ability), scalar(a.AbilityDisplay), scalar(a.Uncertainty), scalar(a.Framework), scalar(a.Percentile),
		scalar(a.Reach.ElapsedDays), scalar(a.Reach.Grade), scalar(a.Reach.TimeOfYear), scalar(a.Reach.Ability), scalar(a.Reach.Probability),
		scalar(a.Peak.ElapsedDays), scalar(a.Peak.Probability), "", ""}
	exception, problems := len(row)-2, len(row)-1
	if status != 200 {
		row[exception] = a.ExceptionType
		row[problems] = a.AdditionalInfo
		if len(a.ValidationErrors) > 0 {
			var list []string
			for _, field := range slices.Sorted(maps.Keys(a.ValidationErrors)) {
				for _, msg := range a.ValidationErrors[field] {
					list = append(list, field+": "+msg)
				}
			}
			row[problems] = strings.Join(list, "; ")
		}
	}
	return row
}

// scalar is a JSON string's text, or a number's as written; anything else (an object, an
// array, null, nothing) is empty.
func scalar(raw json.RawMessage) string {
	var s string
	switch {
	case len(raw) == 0:
		return ""
	case json.Unmarshal(raw, &s) == nil:
		return s
	case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
		return string(raw)
	}
	return ""
}
