package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

const scorePath = "/api/score/items/difficulties/bayes"

// variants is how many distinct bodies the batch cycles through, so that answers differ from
// record to record and each can be checked against its body's unary answer.
const variants = 64

// scoreBodies are bench/e2e's scoreBody (40 item difficulties, lexile, a prior grown over 120
// days) with numberCorrect and priorAbility varied.
func scoreBodies() [][]byte {
	out := make([][]byte, variants)
	for k := range out {
		var items []string
		for i := 0; i < 40; i++ {
			items = append(items, `{"difficulty":`+strconv.FormatFloat(500+10*float64(i), 'f', -1, 64)+`}`)
		}
		out[k] = []byte(`{"items":[` + strings.Join(items, ",") + `],"numberCorrect":` + strconv.Itoa(5+k%31) +
			`,"framework":"lexile","priorAbility":` + strconv.Itoa(600+5*k) + `,"priorUncertainty":70,"elapsedDays":120}`)
	}
	return out
}

// The reference: bench/bare's handler (copied: it is package main), a body decoded by
// encoding/json into plain structs, the same pkg/measure calls as the service's
// ScoreDifficultiesBayes, the answer encoded by encoding/json.
type bareRequest struct {
	Items []struct {
		Difficulty float64 `json:"difficulty"`
		Count      *int    `json:"count"`
	} `json:"items"`
	NumberCorrect    int     `json:"numberCorrect"`
	Framework        string  `json:"framework"`
	PriorAbility     float64 `json:"priorAbility"`
	PriorUncertainty float64 `json:"priorUncertainty"`
	ElapsedDays      float64 `json:"elapsedDays"`
}

type bareAnswer struct {
	Ability        int    `json:"ability"`
	AbilityDisplay string `json:"abilityDisplay"`
	Uncertainty    int    `json:"uncertainty"`
	Framework      string `json:"framework"`
	APIVersion     string `json:"apiVersion"`
}

// bareScore is one record's work in the reference loop, its answer appended to out.
func bareScore(bundle *measure.Bundle, body []byte, out *bytes.Buffer) error {
	var req bareRequest
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&req); err != nil {
		return err
	}
	fw, _ := bundle.Framework(req.Framework)
	test := measure.Test{Correct: req.NumberCorrect}
	for _, it := range req.Items {
		n := 1
		if it.Count != nil {
			n = *it.Count
		}
		test.Items = append(test.Items, measure.Difficulty{Measure: it.Difficulty, Count: n})
	}
	prior := fw.Grow(measure.Normal{Mean: req.PriorAbility, SD: req.PriorUncertainty}, req.ElapsedDays)
	est, _ := fw.Bayes(test, prior)
	return json.NewEncoder(out).Encode(bareAnswer{measure.Round(est.Ability), fw.Display(est.Ability), measure.Round(est.Uncertainty), fw.Name, "dev"})
}

// refLoop runs the reference over records n0..n1-1 and returns the seconds taken and this
// process's CPU seconds meanwhile (the loop's: nothing else runs then).
func refLoop(ctx context.Context, bundle *measure.Bundle, bodies [][]byte, n0, n1 int) (wall, cpu float64, err error) {
	var out bytes.Buffer
	c0 := selfCPU()
	t0 := time.Now()
	for i := n0; i < n1; i++ {
		if i%1024 == 0 && ctx.Err() != nil {
			return 0, 0, ctx.Err()
		}
		out.Reset()
		if err := bareScore(bundle, bodies[i%variants], &out); err != nil {
			return 0, 0, err
		}
	}
	return time.Since(t0).Seconds(), selfCPU() - c0, nil
}

// selfCPU is this process's user + system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// measureBatch streams o.records records to a fresh scoring process, checking every answer.
func measureBatch(ctx context.Context, o options, f *figures) error {
	bodies := scoreBodies()
	bundle := measure.Demo()

	scoring, err := startService(ctx, o.bin, "scoring")
	if err != nil {
		return err
	}
	defer scoring.Stop()
	// The unary answers, the reference's checked against them (the same work), and each
	// record's expected answer line built from them.
	unary := make([][]byte, variants)
	for k, body := range bodies {
		if unary[k], err = post(ctx, "http://"+scoring.httpAddr+scorePath, "application/json", body, scoring.tok); err != nil {
			return err
		}
		unary[k] = bytes.TrimRight(unary[k], "\n")
		var ref bytes.Buffer
		if err := bareScore(bundle, body, &ref); err != nil {
			return err
		}
		if err := sameMeasure(ref.Bytes(), unary[k]); err != nil {
			return err
		}
	}
	// A small batch first: the stream's code paths warmed up before the idle reading.
	if _, err := streamBatch(ctx, scoring.httpAddr, scoring.tok, bodies, unary, 1000, nil); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	idle, err := scoring.Memory("VmHWM")
	if err != nil {
		return err
	}

	half := o.records / 2
	ref1, cpu1, err := refLoop(ctx, bundle, bodies, 0, half)
	if err != nil {
		return err
	}
	c0, err := scoring.CPUSeconds()
	if err != nil {
		return err
	}
	elapsed, err := streamBatch(ctx, scoring.httpAddr, scoring.tok, bodies, unary, o.records, func() {
		if rss, err := scoring.Memory("VmRSS"); err == nil {
			f.batchTrail = append(f.batchTrail, (rss-idle)/mib)
		}
	})
	if err != nil {
		return err
	}
	c1, err := scoring.CPUSeconds()
	if err != nil {
		return err
	}
	peak, err := scoring.Memory("VmHWM")
	if err != nil {
		return err
	}
	ref2, cpu2, err := refLoop(ctx, bundle, bodies, half, o.records)
	if err != nil {
		return err
	}
	f.batchRPS = float64(o.records) / elapsed
	f.batchCPU = (c1 - c0) / float64(o.records)
	f.refRPS = float64(o.records) / (ref1 + ref2)
	f.refCPU = (cpu1 + cpu2) / float64(o.records)
	f.batchRSS = peak - idle
	return nil
}

// streamBatch sends n records on one POST /api/score/batch, the body written by one goroutine
// while this one reads the answers, and checks every answer line byte for byte (record i is
// body i%variants, answered exactly as the unary path answered it) and the summary line. It
// returns the seconds from the request to the summary line. tenth, when not nil, is called after
// each tenth of the answers.
func streamBatch(ctx context.Context, httpAddr, tok string, bodies, unary [][]byte, n int, tenth func()) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		var line []byte
		for i := 0; i < n; i++ {
			line = append(line[:0], `{"id":"r`...)
			line = strconv.AppendInt(line, int64(i), 10)
			line = append(line, `","path":"`+scorePath+`","body":`...)
			line = append(line, bodies[i%variants]...)
			line = append(line, "}\n"...)
			if _, err := w.Write(line); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	t0 := time.Now()
	resp, err := send(ctx, "http://"+httpAddr+"/api/score/batch", pr, tok)
	if err != nil {
		pr.CloseWithError(err)
		return 0, err
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var want []byte
	for i := 0; i < n; i++ {
		got, err := r.ReadSlice('\n')
		if err != nil {
			return 0, fmt.Errorf("answer %d: %w (after %q)", i, err, got)
		}
		want = append(want[:0], `{"id":"r`...)
		want = strconv.AppendInt(want, int64(i), 10)
		want = append(want, `","status":200,"body":`...)
		want = append(want, unary[i%variants]...)
		want = append(want, "}\n"...)
		if !bytes.Equal(got, want) {
			return 0, fmt.Errorf("answer %d is %q, want %q (the unary answer)", i, got, want)
		}
		if tenth != nil && (i+1)%max(1, n/10) == 0 {
			tenth()
		}
	}
	summary, err := r.ReadSlice('\n')
	if err != nil {
		return 0, fmt.Errorf("summary: %w (after %q)", err, summary)
	}
	elapsed := time.Since(t0).Seconds()
	if want := fmt.Sprintf(`{"summary":{"records":%d,"ok":%d,"failed":0}}`+"\n", n, n); string(summary) != want {
		return 0, fmt.Errorf("summary is %q, want %q", summary, want)
	}
	if rest, _ := io.ReadAll(r); len(rest) > 0 {
		return 0, fmt.Errorf("%d bytes after the summary: %.200q", len(rest), rest)
	}
	return elapsed, nil
}

// send starts a streamed NDJSON POST and returns once the answer's head is in (200), the body
// still being written.
func send(ctx context.Context, url string, body io.Reader, tok string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	return resp, nil
}

func post(ctx context.Context, url, contentType string, body []byte, tok string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	return b, err
}

func token(httpAddr string) (string, error) {
	b, err := post(context.Background(), "http://"+httpAddr+"/authToken", "application/json", []byte(`{"clientId":"demo","clientSecret":"demo-secret"}`), "")
	if err != nil {
		return "", err
	}
	var t struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(b, &t); err != nil || t.AccessToken == "" {
		return "", fmt.Errorf("authToken answered %s", b)
	}
	return t.AccessToken, nil
}

// sameMeasure checks that the reference and the service give the same answer (apiVersion
// aside), so the two do the same work.
func sameMeasure(a, b []byte) error {
	var va, vb map[string]any
	if err := json.Unmarshal(a, &va); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		return err
	}
	delete(va, "apiVersion")
	delete(vb, "apiVersion")
	if !reflect.DeepEqual(va, vb) {
		return fmt.Errorf("the reference answered %s, the service %s: not the same work", a, b)
	}
	return nil
}
