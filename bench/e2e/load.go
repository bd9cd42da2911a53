package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/yardstick-dev/yardstick/bench/internal/procs"
	"github.com/yardstick-dev/yardstick/internal/proc"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

const scorePath = "/api/score/items/difficulties/bayes"

// scoreBody is the 40-item difficulties Bayes request.
func scoreBody() ([]byte, *scoringv1.ScoreDifficultiesBayesRequest) {
	req := &scoringv1.ScoreDifficultiesBayesRequest{NumberCorrect: ptr(int32(22)), Framework: ptr("lexile"),
		PriorAbility: ptr(700.0), PriorUncertainty: ptr(70.0), ElapsedDays: ptr(120.0)}
	var items []string
	for i := 0; i < 40; i++ {
		d := 500 + 10*float64(i)
		items = append(items, `{"difficulty":`+strconv.FormatFloat(d, 'f', -1, 64)+`}`)
		req.Items = append(req.Items, &scoringv1.ItemDifficulty{Difficulty: ptr(d)})
	}
	return []byte(`{"items":[` + strings.Join(items, ",") + `],"numberCorrect":22,"framework":"lexile","priorAbility":700,"priorUncertainty":70,"elapsedDays":120}`), req
}

func ptr[T any](v T) *T { return &v }

// hammer runs do on conns goroutines for d and returns the number of completed calls.
func hammer(ctx context.Context, conns int, d time.Duration, do func(worker int) error) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var n atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := do(w); err != nil {
					if ctx.Err() == nil {
						once.Do(func() { firstErr = err; cancel() })
					}
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return n.Load(), firstErr
}

// httpClients gives each worker its own keep-alive connection.
func httpClients(n int) []*http.Client {
	out := make([]*http.Client, n)
	for i := range out {
		out[i] = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}, Timeout: time.Minute}
	}
	return out
}

func post(c *http.Client, url string, body []byte, header ...string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
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

// window is one target of the interleaved measurement: a call, the process that serves it, and
// what was counted for it.
type window struct {
	call    func(worker int) error
	proc    *procs.Proc
	n       int64
	cpu     float64
	elapsed float64
}

// interleave measures the windows in turns of o.duration/rounds each, so that whatever else runs on
// the machine meanwhile weighs on every target alike.
func interleave(ctx context.Context, o options, ws ...*window) error {
	const rounds = 12
	for _, w := range ws { // warm-up
		if _, err := hammer(ctx, o.conns, o.duration/rounds, w.call); err != nil {
			return err
		}
	}
	for r := 0; r < rounds; r++ {
		for _, w := range ws {
			c0, err := w.proc.CPUSeconds()
			if err != nil {
				return err
			}
			start := time.Now()
			n, err := hammer(ctx, o.conns, o.duration/rounds, w.call)
			w.elapsed += time.Since(start).Seconds()
			c1, cerr := w.proc.CPUSeconds()
			if err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			w.n += n
			w.cpu += c1 - c0
		}
	}
	for _, w := range ws {
		if w.n == 0 {
			return fmt.Errorf("no request completed")
		}
	}
	return nil
}

func measureRun(ctx context.Context, o options) (figures, error) {
	var f figures
	body, grpcReq := scoreBody()

	bareAddr, err := proc.FreePort()
	if err != nil {
		return f, err
	}
	bare, err := procs.Start(ctx, filepath.Join(o.bin, "bare"), []string{bareAddr}, nil, bareAddr, procs.HTTPReady("http://"+bareAddr+"/"))
	if err != nil {
		return f, err
	}
	defer bare.Stop()
	bareAnswer, err := post(http.DefaultClient, "http://"+bareAddr+scorePath, body)
	if err != nil {
		return f, fmt.Errorf("bare handler: %w", err)
	}

	httpAddr, _ := proc.FreePort()
	grpcAddr, _ := proc.FreePort()
	env := []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=" + httpAddr, "YARDSTICK_GRPC_ADDR=" + grpcAddr}
	scoring, err := procs.Start(ctx, filepath.Join(o.bin, "scoring"), nil, env, httpAddr, procs.HTTPReady("http://"+httpAddr+"/readyz"))
	if err != nil {
		return f, err
	}
	defer scoring.Stop()
	tok, err := token(httpAddr)
	if err != nil {
		return f, err
	}
	answer, err := post(http.DefaultClient, "http://"+httpAddr+scorePath, body, "Authorization", "Bearer "+tok)
	if err != nil {
		return f, err
	}
	if err := sameMeasure(bareAnswer, answer); err != nil {
		return f, err
	}

	plainAddr, err := proc.FreePort()
	if err != nil {
		return f, err
	}
	plain, err := procs.Start(ctx, filepath.Join(o.bin, "baregrpc"), []string{plainAddr}, nil, "", procs.DialReady(plainAddr))
	if err != nil {
		return f, err
	}
	defer plain.Stop()

	bareClients, jsonClients := httpClients(o.conns), httpClients(o.conns)
	grpcClients, plainClients := make([]scoringv1.ScoringServiceClient, o.conns), make([]scoringv1.ScoringServiceClient, o.conns)
	for i := range grpcClients {
		for _, c := range []struct {
			addr string
			into []scoringv1.ScoringServiceClient
		}{{grpcAddr, grpcClients}, {plainAddr, plainClients}} {
			conn, err := grpc.NewClient(c.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return f, err
			}
			defer conn.Close()
			c.into[i] = scoringv1.NewScoringServiceClient(conn)
		}
	}
	plainAnswer, err := plainClients[0].ScoreDifficultiesBayes(ctx, grpcReq)
	if err != nil {
		return f, fmt.Errorf("plain gRPC server: %w", err)
	}
	if err := sameMeasure(bareAnswer, []byte(fmt.Sprintf(`{"ability":%d,"abilityDisplay":%q,"uncertainty":%d,"framework":%q}`,
		plainAnswer.GetAbility(), plainAnswer.GetAbilityDisplay(), plainAnswer.GetUncertainty(), plainAnswer.GetFramework()))); err != nil {
		return f, err
	}
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	bareW := &window{proc: bare, call: func(w int) error {
		_, err := post(bareClients[w], "http://"+bareAddr+scorePath, body)
		return err
	}}
	jsonW := &window{proc: scoring, call: func(w int) error {
		_, err := post(jsonClients[w], "http://"+httpAddr+scorePath, body, "Authorization", "Bearer "+tok)
		return err
	}}
	grpcW := &window{proc: scoring, call: func(w int) error {
		_, err := grpcClients[w].ScoreDifficultiesBayes(authed, grpcReq)
		return err
	}}
	plainW := &window{proc: plain, call: func(w int) error {
		_, err := plainClients[w].ScoreDifficultiesBayes(ctx, grpcReq)
		return err
	}}
	// Allocations are read around JSON windows only: the malloc counter is the process's.
	m0, err := scoring.Mallocs()
	if err != nil {
		return f, err
	}
	if err := interleave(ctx, o, bareW, jsonW); err != nil {
		return f, err
	}
	m1, err := scoring.Mallocs()
	if err != nil {
		return f, err
	}
	// The warm-up's requests are in the malloc delta too.
	f.jsonAllocs = (m1 - m0) / (float64(jsonW.n) * 13 / 12)
	if err := interleave(ctx, o, bareW, grpcW, plainW); err != nil {
		return f, err
	}
	f.bareRPS, f.bareCPU = float64(bareW.n)/bareW.elapsed, bareW.cpu/float64(bareW.n)
	f.jsonRPS, f.jsonCPU = float64(jsonW.n)/jsonW.elapsed, jsonW.cpu/float64(jsonW.n)
	f.grpcCPU = grpcW.cpu / float64(grpcW.n)
	f.plainGRPCCPU = plainW.cpu / float64(plainW.n)
	bare.Stop()
	scoring.Stop()
	plain.Stop()

	if err := measureGroup(ctx, o, &f); err != nil {
		return f, fmt.Errorf("group forecast: %w", err)
	}
	return f, nil
}

func token(httpAddr string) (string, error) {
	b, err := post(http.DefaultClient, "http://"+httpAddr+"/authToken", []byte(`{"clientId":"demo","clientSecret":"demo-secret"}`))
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

// sameMeasure checks that the bare handler and the service give the same answer (apiVersion
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
		return fmt.Errorf("bare handler answered %s, the service %s: not the same work", a, b)
	}
	return nil
}

func median(vs []float64) float64 {
	sort.Float64s(vs)
	return vs[len(vs)/2]
}
