package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

const (
	groupSettings = `{"testUncertainty":32.5,"cutLevels":[500,650,800]}`
	// sampled is how many of the first students are also sent as a unary group, whose
	// forecasts.students entries their answer lines must equal byte for byte.
	sampled = 1000
)

// students generates the group's student lines (bench/e2e's groupBody's students, one a line).
type students struct {
	r *rand.Rand
}

func newStudents() *students { return &students{rand.New(rand.NewPCG(7, 11))} }

func (s *students) next(line []byte) []byte {
	line = append(line, `{"priorAbility":`...)
	line = strconv.AppendInt(line, int64(300+s.r.IntN(1000)), 10)
	line = append(line, `,"priorUncertainty":`...)
	line = strconv.AppendInt(line, int64(30+s.r.IntN(60)), 10)
	line = append(line, `,"elapsedDays":`...)
	line = strconv.AppendInt(line, int64(s.r.IntN(400)), 10)
	return append(line, "}\n"...)
}

// groupSums are the running sums of pkg/measure's GroupAccumulator (method.md §7), taken here from
// the answer lines.
type groupSums struct {
	n             int
	sumMu, sumVar float64
	sumP, sumPQ   []float64
}

type studentAnswer struct {
	Ability       float64   `json:"ability"`
	Uncertainty   float64   `json:"uncertainty"`
	Probabilities []float64 `json:"probabilities"`
}

type groupAnswer struct {
	Ability     float64   `json:"groupAbility"`
	Uncertainty float64   `json:"groupUncertainty"`
	Proportions []float64 `json:"GroupProportionPerLevel"`
	StdErrs     []float64 `json:"groupStderrPerLevel"`
}

func (g *groupSums) add(a studentAnswer) {
	if g.sumP == nil {
		g.sumP, g.sumPQ = make([]float64, len(a.Probabilities)), make([]float64, len(a.Probabilities))
	}
	g.n++
	g.sumMu += a.Ability
	g.sumVar += a.Uncertainty * a.Uncertainty
	for k, p := range a.Probabilities {
		g.sumP[k] += p
		g.sumPQ[k] += p * (1 - p)
	}
}

func (g *groupSums) result() groupAnswer {
	n := float64(g.n)
	out := groupAnswer{Ability: g.sumMu / n, Uncertainty: math.Sqrt(g.sumVar) / n}
	for k := range g.sumP {
		out.Proportions = append(out.Proportions, g.sumP[k]/n)
		out.StdErrs = append(out.StdErrs, math.Sqrt(g.sumPQ[k])/n)
	}
	return out
}

// maxRelDiff compares the server's group with the recomputed one.
func maxRelDiff(got, want groupAnswer) (float64, error) {
	if len(got.Proportions) != len(want.Proportions) || len(got.StdErrs) != len(want.StdErrs) {
		return 0, fmt.Errorf("group has %d proportions and %d standard errors, the students %d", len(got.Proportions), len(got.StdErrs), len(want.Proportions))
	}
	d := 0.0
	rel := func(a, b float64) {
		if a != b {
			d = max(d, math.Abs(a-b)/max(math.Abs(a), math.Abs(b)))
		}
	}
	rel(got.Ability, want.Ability)
	rel(got.Uncertainty, want.Uncertainty)
	for k := range got.Proportions {
		rel(got.Proportions[k], want.Proportions[k])
		rel(got.StdErrs[k], want.StdErrs[k])
	}
	return d, nil
}

// measureGroup streams o.students students to a fresh forecast process and checks the answer.
func measureGroup(ctx context.Context, o options, f *figures) error {
	forecast, err := startService(ctx, o.bin, "forecast")
	if err != nil {
		return err
	}
	defer forecast.Stop()
	// The unary group of the first students: their expected answer lines.
	var unaryBody []byte
	unaryBody = append(unaryBody, `{"studentData":[`...)
	gen := newStudents()
	var line []byte
	for i := 0; i < sampled; i++ {
		if i > 0 {
			unaryBody = append(unaryBody, ',')
		}
		line = gen.next(line[:0])
		unaryBody = append(unaryBody, bytes.TrimSuffix(line, []byte("\n"))...)
	}
	unaryBody = append(unaryBody, `],"testUncertainty":32.5,"cutLevels":[500,650,800]}`...)
	b, err := post(ctx, "http://"+forecast.httpAddr+"/api/forecast/reading/group", "application/json", unaryBody, forecast.tok)
	if err != nil {
		return err
	}
	var unary struct {
		Forecasts struct {
			Students []json.RawMessage `json:"students"`
		} `json:"forecasts"`
	}
	if err := json.Unmarshal(b, &unary); err != nil {
		return err
	}
	if len(unary.Forecasts.Students) != sampled {
		return fmt.Errorf("the unary group answered %d students, want %d", len(unary.Forecasts.Students), sampled)
	}
	// A small stream first: its code paths warmed up before the idle reading.
	if _, _, err := streamGroup(ctx, forecast.httpAddr, forecast.tok, unary.Forecasts.Students, min(sampled, o.students), nil); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	idle, err := forecast.Memory("VmHWM")
	if err != nil {
		return err
	}
	elapsed, d, err := streamGroup(ctx, forecast.httpAddr, forecast.tok, unary.Forecasts.Students, o.students, func() {
		if rss, err := forecast.Memory("VmRSS"); err == nil {
			f.groupTrail = append(f.groupTrail, (rss-idle)/mib)
		}
	})
	if err != nil {
		return err
	}
	peak, err := forecast.Memory("VmHWM")
	if err != nil {
		return err
	}
	f.groupSPS = float64(o.students) / elapsed
	f.groupRSS = peak - idle
	f.groupMaxRelDiff = d
	return nil
}

// streamGroup sends the settings and n students, writing from one goroutine while this one reads
// the answers; checks the first answers against the unary group's entries byte for byte, counts
// n valid answers, and compares the final group line with the group recomputed from them. It
// returns the seconds from the request to the group line and that comparison's max relative
// difference. tenth, when not nil, is called after each tenth of the answers.
func streamGroup(ctx context.Context, httpAddr, tok string, unary []json.RawMessage, n int, tenth func()) (float64, float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		gen := newStudents()
		line := []byte(groupSettings + "\n")
		for i := 0; i <= n; i++ {
			if _, err := w.Write(line); err != nil {
				pw.CloseWithError(err)
				return
			}
			line = gen.next(line[:0])
		}
		pw.CloseWithError(w.Flush())
	}()
	t0 := time.Now()
	resp, err := send(ctx, "http://"+httpAddr+"/api/forecast/reading/group/stream", pr, tok)
	if err != nil {
		pr.CloseWithError(err)
		return 0, 0, err
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var sums groupSums
	for i := 0; i < n; i++ {
		got, err := r.ReadSlice('\n')
		if err != nil {
			return 0, 0, fmt.Errorf("answer %d: %w (after %q)", i, err, got)
		}
		if i < len(unary) && !bytes.Equal(bytes.TrimSuffix(got, []byte("\n")), unary[i]) {
			return 0, 0, fmt.Errorf("student %d answered %q, the unary group %q", i, got, unary[i])
		}
		var a studentAnswer
		if err := json.Unmarshal(got, &a); err != nil || len(a.Probabilities) != 4 {
			return 0, 0, fmt.Errorf("student %d answered %q (%v)", i, got, err)
		}
		sums.add(a)
		if tenth != nil && (i+1)%max(1, n/10) == 0 {
			tenth()
		}
	}
	last, err := r.ReadSlice('\n')
	if err != nil {
		return 0, 0, fmt.Errorf("group line: %w (after %q)", err, last)
	}
	elapsed := time.Since(t0).Seconds()
	var g struct {
		Group *groupAnswer `json:"group"`
	}
	if err := json.Unmarshal(last, &g); err != nil || g.Group == nil {
		return 0, 0, fmt.Errorf("last line %q is not a group (%v)", last, err)
	}
	if rest, _ := io.ReadAll(r); len(rest) > 0 {
		return 0, 0, fmt.Errorf("%d bytes after the group line: %.200q", len(rest), rest)
	}
	if sums.n != n {
		return 0, 0, fmt.Errorf("%d students answered, want %d", sums.n, n)
	}
	d, err := maxRelDiff(*g.Group, sums.result())
	return elapsed, d, err
}
