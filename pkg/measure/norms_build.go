package measure

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
)

// NormSample is one measure of a norming sample: a student's measure with the framework, grade
// and time of year it was taken at.
type NormSample struct {
	Framework  string
	Grade      int
	TimeOfYear string
	Measure    float64
}

// NormsTable is one table of a norms file: its key and its points.
type NormsTable struct {
	Framework  string
	Grade      int
	TimeOfYear string
	Norms
}

// DefaultNormPercentiles are the percentiles BuildNorms tabulates unless told otherwise.
var DefaultNormPercentiles = []float64{1, 5, 10, 25, 50, 75, 90, 95, 99}

var normSampleHeader = []string{"framework", "grade", "time_of_year", "measure"}

// ReadNormSample reads a norming sample in CSV: the header framework,grade,time_of_year,measure
// and one row per measure (framework named, grade 0–12, BOY/MOY/EOY, a finite measure). Lines
// starting with # are comments. name labels the problems, each reported as "name:line: reason"
// (up to 50, joined); on any problem no sample is returned.
func ReadNormSample(r io.Reader, name string) ([]NormSample, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var p problems
	var out []NormSample
	for _, row := range readTable(&p, name, data, normSampleHeader) {
		fw, fok := p.text(row, "framework")
		g, gok := p.grade(row, "grade")
		tod, tok := p.timeOfYear(row)
		m, mok := p.number(row, "measure")
		if fok && gok && tok && mok {
			out = append(out, NormSample{Framework: fw, Grade: g, TimeOfYear: tod, Measure: m})
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no measures", name)
	}
	return out, nil
}

// BuildNorms turns a norming sample into norms tables, one per framework, grade and time of year
// present, sorted by them: at each percentile p (strictly increasing, in (0, 100)) the sample
// quantile of linear interpolation between order statistics (Hyndman and Fan's type 7, R's
// default: position (n − 1)·p/100 + 1), rounded to 0.01 units. A group whose quantiles do not
// strictly increase after rounding (too few distinct measures) is an error naming it, as the
// loader would refuse its table.
func BuildNorms(sample []NormSample, percentiles []float64) ([]NormsTable, error) {
	if len(percentiles) < 2 {
		return nil, fmt.Errorf("build norms: %d percentiles; want at least 2", len(percentiles))
	}
	for i, pc := range percentiles {
		if !(pc > 0 && pc < 100) || (i > 0 && pc <= percentiles[i-1]) {
			return nil, fmt.Errorf("build norms: percentiles %v must increase strictly within (0, 100)", percentiles)
		}
	}
	groups := map[benchKey][]float64{}
	for _, s := range sample {
		k := benchKey{s.Framework, s.Grade, s.TimeOfYear}
		groups[k] = append(groups[k], s.Measure)
	}
	keys := make([]benchKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.framework != b.framework {
			return a.framework < b.framework
		}
		if a.grade != b.grade {
			return a.grade < b.grade
		}
		return slices.Index(timesOfYear, a.time) < slices.Index(timesOfYear, b.time)
	})
	var out []NormsTable
	var errs []error
	for _, k := range keys {
		ms := groups[k]
		sort.Float64s(ms)
		t := NormsTable{Framework: k.framework, Grade: k.grade, TimeOfYear: k.time,
			Norms: Norms{Percentiles: slices.Clone(percentiles), Measures: make([]float64, len(percentiles))}}
		ok := true
		for i, pc := range percentiles {
			h := float64(len(ms)-1) * pc / 100
			lo := int(math.Floor(h))
			q := ms[lo]
			if lo+1 < len(ms) {
				q += (h - float64(lo)) * (ms[lo+1] - ms[lo])
			}
			t.Measures[i] = math.Round(q*100) / 100
			if i > 0 && t.Measures[i] <= t.Measures[i-1] {
				ok = false
			}
		}
		if !ok {
			errs = append(errs, fmt.Errorf("%s grade %d %s: the %d measures give percentile points %v that do not increase strictly; the group needs more distinct measures",
				k.framework, k.grade, k.time, len(ms), t.Measures))
			continue
		}
		out = append(out, t)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("build norms: %w", errors.Join(errs...))
	}
	return out, nil
}

// WriteNorms writes tables as a bundle's norms.csv.
func WriteNorms(w io.Writer, tables []NormsTable, comment string) error {
	cw := csv.NewWriter(w)
	if comment != "" {
		if _, err := fmt.Fprintf(w, "# %s\n", comment); err != nil {
			return fmt.Errorf("write norms: %w", err)
		}
	}
	_ = cw.Write(normsHeader)
	for _, t := range tables {
		for i, pc := range t.Percentiles {
			_ = cw.Write([]string{t.Framework, strconv.Itoa(t.Grade), t.TimeOfYear,
				strconv.FormatFloat(pc, 'f', -1, 64), strconv.FormatFloat(t.Measures[i], 'f', -1, 64)})
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write norms: %w", err)
	}
	return nil
}
