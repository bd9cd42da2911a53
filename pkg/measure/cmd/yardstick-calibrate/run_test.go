package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// booklets is 900 persons × 24 items in 3 overlapping booklets (pkg/measure's eRm reference set).
var booklets = filepath.Join("..", "..", "testdata", "calibrate", "booklets.csv")

func call(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	err = run(context.Background(), args, &o, &e)
	return o.String(), e.String(), err
}

type report struct {
	Items []struct {
		ID                    string
		Logit, SE, Difficulty float64
		InfitMnsq, OutfitMnsq float64
		N                     int
	} `json:"items"`
	Dropped    []measure.DroppedItem `json:"dropped"`
	Anchors    []measure.Anchor      `json:"anchors"`
	Persons    int                   `json:"persons"`
	Iterations int                   `json:"iterations"`
}

func readReport(t *testing.T, path string) (report, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report
	var raw map[string]any
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	return r, raw
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunWithTargetMean(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var strands strings.Builder
	strands.WriteString("id,strand\n")
	for i := 1; i <= 24; i++ {
		strands.WriteString([]string{"I01", "I02", "I03", "I04", "I05", "I06", "I07", "I08", "I09", "I10", "I11", "I12",
			"I13", "I14", "I15", "I16", "I17", "I18", "I19", "I20", "I21", "I22", "I23", "I24"}[i-1])
		strands.WriteString([]string{",Number\n", ",Geometry\n"}[i%2])
	}
	out, rep := filepath.Join(dir, "bundle"), filepath.Join(dir, "report.json")
	_, stderr, err := call(t, "-framework", "quantile", "-mean", "700", "-strands", write(t, dir, "strands.csv", strands.String()),
		"-out", out, "-report", rep, "-progress", "0", booklets)
	if err != nil {
		t.Fatal(err)
	}
	r, raw := readReport(t, rep)
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	if len(keys) != 5 || raw["items"] == nil || raw["dropped"] == nil || raw["anchors"] == nil {
		t.Errorf("report keys %v; want items, dropped, anchors, persons, iterations (arrays never null)", keys)
	}
	item := raw["items"].([]any)[0].(map[string]any)
	var itemKeys []string
	for _, k := range []string{"id", "logit", "se", "infitMnsq", "outfitMnsq", "n", "difficulty"} {
		if _, ok := item[k]; ok {
			itemKeys = append(itemKeys, k)
		}
	}
	if len(itemKeys) != 7 || len(item) != 7 {
		t.Errorf("item fields %v; want id, logit, se, infitMnsq, outfitMnsq, n, difficulty", item)
	}
	if len(r.Items) != 24 || r.Persons != 879 || r.Iterations < 2 || len(r.Dropped) != 0 || len(r.Anchors) != 0 {
		t.Errorf("report: %d items, %d persons, %d iterations, dropped %v, anchors %v; want 24 items from 879 persons",
			len(r.Items), r.Persons, r.Iterations, r.Dropped, r.Anchors)
	}
	mean := 0.0
	for _, it := range r.Items {
		mean += it.Difficulty / 24
	}
	if math.Abs(mean-700) > 1e-9 {
		t.Errorf("mean difficulty %v; want 700", mean)
	}
	b, err := measure.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range r.Items {
		got, ok := b.Item(it.ID)
		want := measure.Item{ID: it.ID, Framework: "quantile", Strand: []string{"Number", "Geometry"}[(i+1)%2], Difficulty: math.Round(it.Difficulty*100) / 100}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("bundle item %s: %+v; want %+v", it.ID, got, want)
		}
	}
	if _, ok := b.Item("Q000001"); !ok {
		t.Error("the bundle lost the demo's items")
	}
	for _, want := range []string{"iteration 1, largest change", "24 items calibrated (24 new, 0 anchors, 0 dropped) from 879 persons"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q; want it to contain %q", stderr, want)
		}
	}
}

// TestRunAnchorsRecoversShift: a bundle from a first run, with every item moved up by 50, anchors
// a second data set that holds half of those items (I01–I12) and twelve new ones (the same
// responses under new ids J13–J24). The new items land 50 above where the first run put them,
// and the anchors show no displacement — both to the 0.01 units that a bundle stores.
func TestRunAnchorsRecoversShift(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, rep1 := filepath.Join(dir, "first"), filepath.Join(dir, "first.json")
	if _, _, err := call(t, "-framework", "lexile", "-mean", "600", "-out", first, "-report", rep1, booklets); err != nil {
		t.Fatal(err)
	}
	// Move every calibrated item of the first bundle up by 50.
	r1, _ := readReport(t, rep1)
	items, err := os.ReadFile(filepath.Join(first, "items.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(items), "\n")
	for i, line := range lines {
		if f := strings.Split(line, ","); len(f) == 4 && strings.HasPrefix(f[0], "I") {
			d, err := strconv.ParseFloat(f[3], 64)
			if err != nil {
				t.Fatal(err)
			}
			f[3] = strconv.FormatFloat(d+50, 'f', -1, 64)
			lines[i] = strings.Join(f, ",")
		}
	}
	write(t, first, "items.csv", strings.Join(lines, "\n"))
	data, err := os.ReadFile(booklets)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(data), "\n")
	for i := 13; i <= 24; i++ {
		head = strings.Replace(head, fmt.Sprintf(",I%02d", i), fmt.Sprintf(",J%02d", i), 1)
	}
	second := write(t, dir, "second.csv", head+"\n"+rest)
	out, rep2 := filepath.Join(dir, "second"), filepath.Join(dir, "second.json")
	if _, _, err := call(t, "-framework", "lexile", "-anchors", first, "-out", out, "-report", rep2, second); err != nil {
		t.Fatal(err)
	}
	r2, _ := readReport(t, rep2)
	if len(r2.Anchors) != 12 || len(r2.Items) != 24 {
		t.Fatalf("%d anchors, %d items; want 12 and 24", len(r2.Anchors), len(r2.Items))
	}
	for _, a := range r2.Anchors {
		if math.Abs(a.Displacement) > 0.01 || !strings.HasPrefix(a.ID, "I") {
			t.Errorf("anchor %+v; want displacement 0 (±0.01)", a)
		}
	}
	b, err := measure.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for k := 12; k < 24; k++ {
		id := "J" + r1.Items[k].ID[1:]
		got, ok := b.Item(id)
		if want := r1.Items[k].Difficulty + 50; !ok || math.Abs(got.Difficulty-want) > 0.01 || math.Abs(r2.Items[k].Difficulty-want) > 0.01 {
			t.Errorf("%s: bundle %v, report %v; want %v (±0.01)", id, got.Difficulty, r2.Items[k].Difficulty, want)
		}
	}
	if it, ok := b.Item("I01"); !ok || math.Abs(it.Difficulty-(r1.Items[0].Difficulty+50)) > 0.01 {
		t.Errorf("anchor I01 in the new bundle: %+v; want its bank value kept", it)
	}
}

// TestRunWritesNothingOnError: bad input is reported with its position and leaves neither the
// bundle nor the report behind.
func TestRunWritesNothingOnError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		name, data string
		extra      []string
		want       string
	}{
		{"bad cell", "person,A,B\np1,1,0\np2,0,yes\n", nil, `resp.csv:3:6: response "yes" to item B is not a score 0 … 100 or empty`},
		{"disconnected", "person,A,B,C,D\np1,1,0,,\np2,0,1,,\np3,,,1,0\np4,,,0,1\n", nil,
			"the booklet design does not connect: no person links these 2 groups of items, so they cannot be put on one scale: {A, B}; {C, D}"},
		{"collision", "person,Q000001,B\np1,1,0\np2,0,1\n", nil, "1 item ids of the data are already in the bundle: Q000001"},
		{"strands", "person,A,B\np1,1,0\np2,0,1\n", []string{"-strands", "STRANDS"}, "strands: no strand for 1 new items: B"},
		{"output not empty", "person,A,B\np1,1,0\np2,0,1\n", []string{"-out", "FULL"}, "exists and is not empty"},
		{"anchor bundle broken", "person,A,B\np1,1,0\np2,0,1\n", []string{"-anchors", "EMPTY"}, "anchor bundle: load content bundle"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sub := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			resp := write(t, sub, "resp.csv", c.data)
			out, rep := filepath.Join(sub, "out"), filepath.Join(sub, "report.json")
			args := []string{"-framework", "quantile", "-report", rep}
			mean := true
			for i := 0; i < len(c.extra); i += 2 {
				v := c.extra[i+1]
				switch v {
				case "STRANDS":
					v = write(t, sub, "strands.csv", "id,strand\nA,x\n")
				case "FULL":
					v, out = sub, sub
				case "EMPTY":
					v, mean = t.TempDir(), false
				}
				args = append(args, c.extra[i], v)
			}
			if mean {
				args = append(args, "-mean", "500")
			}
			if out != sub {
				args = append(args, "-out", out)
			}
			_, _, err := call(t, append(args, resp)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want an error containing %q", err, c.want)
			}
			if c.name == "bad cell" && !strings.Contains(err.Error(), filepath.Join(sub, "resp.csv")+":3:6:") {
				t.Errorf("error %q does not name file:line:column", err)
			}
			if _, err := os.Stat(rep); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("report written: %v", err)
			}
			if out != sub {
				if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("bundle written: %v", err)
				}
			}
			entries, _ := os.ReadDir(sub)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("temporary %s left behind", e.Name())
				}
			}
		})
	}
}

func TestRunReportToStdout(t *testing.T) {
	t.Parallel()
	stdout, stderr, err := call(t, "-framework", "lexile", "-mean", "800", "-report", "-", booklets)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "largest change") { // default -progress 1s; this run takes milliseconds
		t.Errorf("stderr %q: progress lines for a short run", stderr)
	}
	var r report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || len(r.Items) != 24 {
		t.Errorf("stdout %.200q: %v; want the JSON report", stdout, err)
	}
}

// TestRunPolytomous: a file of scores 0 … 4 is calibrated by the partial credit model unless
// told otherwise; the report names the model and gives each polytomous item's steps; the rating
// scale model keeps only the items scored 0–4 like the file's highest, naming the others; the
// Rasch model refuses the file, naming a cell.
func TestRunPolytomous(t *testing.T) {
	t.Parallel()
	data := filepath.Join("..", "..", "testdata", "calibrate", "pcm_mixed.csv")
	for _, c := range []struct {
		model, by      string
		items, dropped int
	}{{"", "the partial credit model", 20, 0}, {"pcm", "the partial credit model", 20, 0}, {"rsm", "the rating scale model", 6, 14}} {
		t.Run("model "+c.model, func(t *testing.T) {
			t.Parallel()
			args := []string{"-framework", "quantile", "-mean", "650", "-report", "-", "-progress", "0", data}
			if c.model != "" {
				args = append([]string{"-model", c.model}, args...)
			}
			stdout, stderr, err := call(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Model string `json:"model"`
				Items []struct {
					ID    string
					Logit float64
					Steps []struct{ Logit, SE, Difficulty float64 }
				} `json:"items"`
				Dropped []measure.DroppedItem `json:"dropped"`
			}
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatal(err)
			}
			want := c.model
			if want == "" {
				want = "pcm"
			}
			if r.Model != want || len(r.Items) != c.items || len(r.Dropped) != c.dropped {
				t.Fatalf("model %q, %d items, dropped %v; want %s, %d items, %d dropped", r.Model, len(r.Items), r.Dropped, want, c.items, c.dropped)
			}
			for _, it := range r.Items {
				var n int
				if _, err := fmt.Sscanf(it.ID, "I%d", &n); err != nil {
					t.Fatal(err)
				}
				if steps := 2 + (n-1)%3; len(it.Steps) != steps {
					t.Errorf("%s: %d steps; want %d", it.ID, len(it.Steps), steps)
				}
			}
			if c.model == "rsm" && !strings.Contains(r.Dropped[0].Reason, "the rating scale model scores every item of the file 0–4") {
				t.Errorf("dropped %v; want the rating scale model's reason", r.Dropped[0])
			}
			for _, w := range []string{"iteration 1, largest change", fmt.Sprintf("%d items calibrated by %s (%d new, 0 anchors, %d dropped)", c.items, c.by, c.items, c.dropped)} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q; want it to contain %q", stderr, w)
				}
			}
		})
	}
	_, _, err := call(t, "-model", "rasch", "-framework", "quantile", "-mean", "650", "-report", "-", data)
	if err == nil || !strings.Contains(err.Error(), "the Rasch model takes 0/1 responses, and person P0001 scored 2 on item I01") {
		t.Errorf("-model rasch: got %v; want the refusal naming the first cell above 1", err)
	}
}

// TestRunDichotomousAsBefore: for 0/1 response files the report, the rows appended to the
// bundle's items.csv and the summary line are byte for byte those of the build before items
// scored in more than two categories (testdata/asbefore, its README).
func TestRunDichotomousAsBefore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, framework, mean string }{
		{"booklets", "quantile", "700"}, {"random", "lexile", "600"}, {"wide", "quantile", "700"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, rep := filepath.Join(dir, "bundle"), filepath.Join(dir, "report.json")
			data := filepath.Join("..", "..", "testdata", "calibrate", c.name+".csv")
			_, stderr, err := call(t, "-framework", c.framework, "-mean", c.mean, "-report", rep, "-out", out, data)
			if err != nil {
				t.Fatal(err)
			}
			golden := func(ext string) string {
				b, err := os.ReadFile(filepath.Join("testdata", "asbefore", c.name+ext))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			report, err := os.ReadFile(rep)
			if err != nil {
				t.Fatal(err)
			}
			if want := golden(".report.json"); string(report) != want {
				t.Errorf("report differs from the previous build's:\n got %.300s…\nwant %.300s…", report, want)
			}
			items, err := os.ReadFile(filepath.Join(out, "items.csv"))
			if err != nil {
				t.Fatal(err)
			}
			added := string(items[strings.LastIndex(string(items), "\n# ")+1:]) // the last comment is the command's
			if want := golden(".items.csv"); added != want {
				t.Errorf("items.csv rows differ from the previous build's:\n got %.300s…\nwant %.300s…", added, want)
			}
			if i := strings.LastIndex(stderr, ", "); i < 0 || stderr[:i]+"\n" != golden(".stderr") {
				t.Errorf("summary %q; want %q and a duration", stderr, golden(".stderr"))
			}
		})
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing", nil, "want one response file after the flags, got 0 arguments"},
		{"no framework", []string{"-mean", "1", "-report", "-", "x.csv"}, "-framework is required"},
		{"neither", []string{"-framework", "lexile", "-report", "-", "x.csv"}, "give exactly one of -anchors and -mean"},
		{"both", []string{"-framework", "lexile", "-mean", "1", "-anchors", "d", "-report", "-", "x.csv"}, "give exactly one of -anchors and -mean"},
		{"no output", []string{"-framework", "lexile", "-mean", "1", "x.csv"}, "give -out, -report or both"},
		{"bad mean", []string{"-framework", "lexile", "-mean", "NaN", "x.csv"}, `invalid value "NaN" for flag -mean: "NaN" is not a number`},
		{"unknown flag", []string{"-frame", "lexile"}, "flag provided but not defined: -frame"},
		{"two files", []string{"-framework", "lexile", "-mean", "1", "-report", "-", "a.csv", "b.csv"}, "got 2 arguments"},
		{"bad program", []string{"-program", "Acme", "-framework", "lexile", "-mean", "1", "-report", "-", "x.csv"},
			`invalid value "Acme" for flag -program: "Acme" must be 1 to 64 of a-z 0-9 . _ - starting with a letter or digit`},
		{"bad model", []string{"-model", "grm", "-framework", "lexile", "-mean", "1", "-report", "-", "x.csv"}, `invalid value "grm" for flag -model: "grm"; want rasch, pcm or rsm`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := call(t, c.args...)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v; want a usage error containing %q", err, c.want)
			}
		})
	}
	_, stderr, err := call(t, "-help")
	if err != nil || !strings.Contains(stderr, "usage:\n  yardstick-calibrate -framework") {
		t.Errorf("-help: %v, %q; want the usage and no error", err, stderr)
	}
	if _, _, err := call(t, "-framework", "science", "-mean", "1", "-report", "-", booklets); err == nil ||
		!strings.Contains(err.Error(), `the bundle has no framework "science" (it has lexile, quantile)`) {
		t.Errorf("unknown framework: got %v", err)
	}
	if _, _, err := call(t, "-framework", "lexile", "-mean", "1", "-report", "-", "no-such.csv"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v; want not exist", err)
	}
}

// TestWriteReportToPipe: a report path that is a named pipe (or a device such as /dev/null) is
// written to and stays what it is; the rename that protects a regular file would replace it.
func TestWriteReportToPipe(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "report.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		data, _ := os.ReadFile(fifo) // blocks until the writer opens the pipe, reads to its close
		got <- data
	}()
	if err := writeReport(fifo, []byte("{}\n"), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case data := <-got:
		if string(data) != "{}\n" {
			t.Errorf("the reader got %q; want the report", data)
		}
	case <-time.After(10 * time.Second):
		t.Error("the reader got nothing in 10 s: the report did not go through the pipe")
	}
	if fi, err := os.Stat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("after the write: %v, %v; want the named pipe still there", fi.Mode(), err)
	}
}
