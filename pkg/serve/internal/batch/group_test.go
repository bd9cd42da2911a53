package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// groupService is what the forecast service is to provide, in miniature: settings and student
// lines validated, students added to measure's GroupAccumulator, entries and the group encoded
// as the unary group answer encodes them (here by encodeEntry and encodeGroup).
type groupService struct{ fw *measure.Framework }

type groupSettings struct {
	TestUncertainty *float64  `json:"testUncertainty"`
	CutLevels       []float64 `json:"cutLevels"`
	Framework       string    `json:"framework"`
}

func (s groupService) open(_ context.Context, line []byte) (GroupStream, error) {
	if line == nil {
		return nil, rpcerr.Invalid("", "the body is empty: its first line must be the group's settings")
	}
	var set groupSettings
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	var p rpcerr.Problems
	if err := d.Decode(&set); err != nil {
		p.Add("", "%v", err)
		return nil, p.Err()
	}
	if set.TestUncertainty == nil || *set.TestUncertainty < 0 {
		p.Add("testUncertainty", "is required, >= 0")
	}
	if len(set.CutLevels) == 0 {
		p.Add("cutLevels", "must hold at least one cut level")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return &groupOf{acc: s.fw.NewGroupAccumulator(*set.TestUncertainty, set.CutLevels)}, nil
}

type groupOf struct{ acc *measure.GroupAccumulator }

func parseStudent(line []byte) (measure.Student, error) {
	var p rpcerr.Problems
	var v [3]*float64
	if bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) {
		var a []float64
		if err := json.Unmarshal(line, &a); err != nil || len(a) != 3 {
			p.Add("", "a student array is [priorAbility, priorUncertainty, elapsedDays]")
			return measure.Student{}, p.Err()
		}
		v = [3]*float64{&a[0], &a[1], &a[2]}
	} else {
		var o struct{ PriorAbility, PriorUncertainty, ElapsedDays *float64 }
		if err := json.Unmarshal(line, &o); err != nil {
			p.Add("", "%v", err)
			return measure.Student{}, p.Err()
		}
		v = [3]*float64{o.PriorAbility, o.PriorUncertainty, o.ElapsedDays}
	}
	measure.CheckPrior(p.Add, "", v[0], v[1], v[2])
	if err := p.Err(); err != nil {
		return measure.Student{}, err
	}
	return measure.Student{Prior: measure.Normal{Mean: *v[0], SD: *v[1]}, ElapsedDays: *v[2]}, nil
}

func (g *groupOf) Entry(_ context.Context, line []byte) ([]byte, error) {
	s, err := parseStudent(line)
	if err != nil {
		return nil, err
	}
	return encodeEntry(g.acc.Add(s)), nil
}

func (g *groupOf) Group(context.Context) ([]byte, error) { return encodeGroup(g.acc.Result()), nil }

func floats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func encodeEntry(f measure.Forecast) []byte {
	return fmt.Appendf(nil, `{"ability":%s,"uncertainty":%s,"probabilities":%s}`,
		strconv.FormatFloat(f.Ability, 'g', -1, 64), strconv.FormatFloat(f.Uncertainty, 'g', -1, 64), floats(f.Probabilities))
}

func encodeGroup(g measure.GroupForecast) []byte {
	return fmt.Appendf(nil, `{"groupAbility":%s,"groupUncertainty":%s,"GroupProportionPerLevel":%s,"groupStderrPerLevel":%s}`,
		strconv.FormatFloat(g.Ability, 'g', -1, 64), strconv.FormatFloat(g.Uncertainty, 'g', -1, 64), floats(g.Proportions), floats(g.StdErrs))
}

func lexile(t *testing.T) *measure.Framework {
	t.Helper()
	fw, ok := measure.Demo().Framework("lexile")
	if !ok {
		t.Fatal("the demonstration bundle has no lexile framework")
	}
	return fw
}

func groupServer(t *testing.T, o Options) (*httptest.Server, chan GroupCounts) {
	t.Helper()
	svc := groupService{fw: lexile(t)}
	done := make(chan GroupCounts, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := ServeGroup(r.Context(), w, r.Body, svc.open, o)
		done <- c
	}))
	t.Cleanup(srv.Close)
	return srv, done
}

// The stream's lines are the unary group answer's students, in order, with broken lines in the
// place of invalid students, and its group line is the unary group of the valid students.
func TestGroupStreamEqualsUnary(t *testing.T) {
	t.Parallel()
	fw := lexile(t)
	for _, n := range []int{0, 1, 2, 500} {
		t.Run(fmt.Sprintf("students=%d", n), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(3, uint64(n)))
			srv, done := groupServer(t, Options{})
			cuts := []float64{400, 750, 1100}
			var body strings.Builder
			body.WriteString(`{"testUncertainty": 35, "cutLevels": [400, 750, 1100]}` + "\n")
			var valid []measure.Student
			var want []string
			lineNo := 1
			for i := range n {
				s := measure.Student{Prior: measure.Normal{Mean: -200 + 1600*r.Float64(), SD: 20 + 150*r.Float64()}, ElapsedDays: float64(r.IntN(400))}
				lineNo++
				switch {
				case i%50 == 7:
					body.WriteString(fmt.Sprintf(`{"priorAbility": %v, "priorUncertainty": -1, "elapsedDays": 3}`+"\n", s.Prior.Mean))
					want = append(want, fmt.Sprintf("@%d 400", lineNo))
					continue
				case i%50 == 9:
					body.WriteString("\n") // blank: no answer, but counted
					lineNo++
				}
				if i%2 == 0 {
					body.WriteString(fmt.Sprintf("[%v, %v, %v]\n", s.Prior.Mean, s.Prior.SD, s.ElapsedDays))
				} else {
					body.WriteString(fmt.Sprintf(`{"priorAbility": %v, "priorUncertainty": %v, "elapsedDays": %v}`+"\n", s.Prior.Mean, s.Prior.SD, s.ElapsedDays))
				}
				valid = append(valid, s)
				want = append(want, "")
			}
			unary := fw.Group(valid, 35, cuts)
			resp, err := http.Post(srv.URL, "application/x-ndjson", strings.NewReader(body.String()))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			all := new(bytes.Buffer)
			_, _ = all.ReadFrom(resp.Body)
			got := lines(all.Bytes())
			if resp.StatusCode != 200 || len(got) != len(want)+1 {
				t.Fatalf("%d, %d lines; want 200 and %d", resp.StatusCode, len(got), len(want)+1)
			}
			k := 0
			for i, w := range want {
				if w == "" {
					if wantLine := string(encodeEntry(unary.Students[k])); got[i] != wantLine {
						t.Fatalf("line %d: %s; want the unary entry %s", i, got[i], wantLine)
					}
					k++
					continue
				}
				a := decode(t, got[i])
				if fmt.Sprintf("@%d %d", a.Line, a.Status) != w || !bytes.Contains(a.Body, []byte(`"priorUncertainty"`)) {
					t.Errorf("line %d: %s; want %s naming priorUncertainty", i, got[i], w)
				}
			}
			wantGroup := `{"group":null}`
			if len(valid) > 0 {
				wantGroup = `{"group":` + string(encodeGroup(unary)) + `}`
			}
			if got[len(got)-1] != wantGroup {
				t.Errorf("last line %s; want %s", got[len(got)-1], wantGroup)
			}
			c := <-done
			if !c.Complete || c.Entries != len(valid) || c.Invalid != len(want)-len(valid) {
				t.Errorf("counts %+v", c)
			}
		})
	}
}

// Before the head: a missing, oversized or invalid settings line answers the whole request.
func TestGroupSettingsRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		status     int
		says       string
	}{
		{"empty body", "", 400, "first line must be the group's settings"},
		{"blank lines only", "\n\n", 400, "first line must be the group's settings"},
		{"invalid settings", `{"cutLevels": []}` + "\n[500, 50, 0]\n", 400, `"testUncertainty":["is required, >= 0"]`},
		{"not JSON", "{\n[500, 50, 0]\n", 400, "ValidationError"},
		{"settings over 1 MiB", `{"cutLevels": [400], "testUncertainty": 3` + strings.Repeat(" ", 1<<20) + "}\n", 413, `"additionalInfo":"The line exceeds the size limit of 1048576 bytes (1 MiB)."`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := groupServer(t, Options{})
			resp, err := http.Post(srv.URL, "application/x-ndjson", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b := new(bytes.Buffer)
			_, _ = b.ReadFrom(resp.Body)
			if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(b.String(), c.says) {
				t.Errorf("%d %s %s; want %d, the error body with %q", resp.StatusCode, resp.Header.Get("Content-Type"), b, c.status, c.says)
			}
		})
	}
	// The settings line at exactly the limit is accepted.
	srv, _ := groupServer(t, Options{MaxLine: 64})
	settings := `{"cutLevels": [400], "testUncertainty": 3}`
	resp, err := http.Post(srv.URL, "", strings.NewReader(settings+strings.Repeat(" ", 64-len(settings))+"\n[500, 50, 0]\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("settings of exactly MaxLine bytes: %d; want 200", resp.StatusCode)
	}
}

// Student lines: both shapes, a line over the limit (413, left out), and each answer sent while
// the body is still open.
func TestGroupStreamWhileOpen(t *testing.T) {
	t.Parallel()
	srv, done := groupServer(t, Options{MaxLine: 64})
	// The head waits for the settings line, so it is sent with the request.
	d := openDuplexWith(t, srv.URL, `{"testUncertainty": 0, "cutLevels": [700]}`+"\n")
	if d.resp.StatusCode != 200 || d.resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("head %d %s", d.resp.StatusCode, d.resp.Header.Get("Content-Type"))
	}
	fw := lexile(t)
	one := fw.Forecast(measure.Normal{Mean: 700, SD: 50}, 0, 0, []float64{700})
	d.send(t, "[700, 50, 0]\n")
	if got := d.next(t); got != string(encodeEntry(one)) {
		t.Fatalf("first student %s; want %s", got, encodeEntry(one))
	}
	d.send(t, "["+strings.Repeat(" ", 64)+"700, 50, 0]\n")
	if a := decode(t, d.next(t)); a.Line != 3 || a.Status != 413 || !strings.Contains(string(a.Body), "size limit of 64 bytes.") {
		t.Fatalf("long line answered %+v; want line 3, 413 stating the limit of 64 bytes", a)
	}
	d.send(t, `{"priorAbility":700,"priorUncertainty":50,"elapsedDays":0}`+"\n")
	d.send(t, "[700, 50, 0, 1]\n")
	if got := d.next(t); got == "" || got[0] != '{' || strings.Contains(got, `"line"`) {
		t.Fatalf("object student answered %s", got)
	}
	if a := decode(t, d.next(t)); a.Line != 5 || a.Status != 400 {
		t.Fatalf("4-number array answered %+v; want line 5, 400", a)
	}
	d.body.Close()
	want := `{"group":` + string(encodeGroup(fw.Group([]measure.Student{{Prior: measure.Normal{Mean: 700, SD: 50}}, {Prior: measure.Normal{Mean: 700, SD: 50}}}, 0, []float64{700}))) + `}`
	if got := d.next(t); got != want {
		t.Errorf("group line %s; want %s", got, want)
	}
	if c := <-done; c.Entries != 2 || c.Invalid != 2 || c.Lines != 5 || !c.Complete {
		t.Errorf("counts %+v", c)
	}
}

// faulty is a group whose second student is a fault of the service and whose aggregate cannot
// be made (a group that is not finite).
type faulty struct{ n int }

func (f *faulty) Entry(context.Context, []byte) ([]byte, error) {
	if f.n++; f.n == 2 {
		return nil, rpcerr.Internal()
	}
	return []byte(`{"ok":true}`), nil
}

func (f *faulty) Group(context.Context) ([]byte, error) { return nil, errors.New("not finite") }

// A student's fault is its line's 500, the stream goes on; a group that cannot be made ends the
// stream without its last line (as a cut stream), and ServeGroup says why.
func TestGroupFaults(t *testing.T) {
	t.Parallel()
	done := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := ServeGroup(r.Context(), w, r.Body, func(context.Context, []byte) (GroupStream, error) { return &faulty{}, nil },
			Options{Log: slog.New(slog.DiscardHandler)})
		done <- err
	}))
	t.Cleanup(srv.Close)
	got := post(t, srv.URL, "{}\n[1,2,3]\n[1,2,3]\n[1,2,3]\n")
	want := []string{`{"ok":true}`, `{"line":3,"status":500,"body":` + string(internalBody) + `}`, `{"ok":true}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := <-done; err == nil || err.Error() != "not finite" {
		t.Errorf("ServeGroup = %v; want the group's error", err)
	}
}

// TestGroupByteOrderMark: a mark opening the stream is skipped (the settings read), one opening a
// later student line is that line's 400 naming it, and the group goes on without it.
func TestGroupByteOrderMark(t *testing.T) {
	t.Parallel()
	srv, _ := groupServer(t, Options{})
	body := "\xEF\xBB\xBF" + `{"cutLevels": [400], "testUncertainty": 3}` + "\n[500, 50, 0]\n\xEF\xBB\xBF[600, 50, 0]\n"
	resp, err := http.Post(srv.URL, "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b := new(bytes.Buffer)
	_, _ = b.ReadFrom(resp.Body)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if resp.StatusCode != 200 || len(lines) != 3 {
		t.Fatalf("got %d %q; want 200, a student, a refused line, the group", resp.StatusCode, lines)
	}
	if want := `{"line":3,"status":400,`; !strings.HasPrefix(lines[1], want) || !strings.Contains(lines[1], "byte-order mark (U+FEFF, bytes EF BB BF) at byte 0") {
		t.Errorf("line 3's answer: got %s; want a 400 naming the byte-order mark", lines[1])
	}
	if !strings.HasPrefix(lines[2], `{"group":{`) {
		t.Errorf("last line: got %s; want the group of the one valid student", lines[2])
	}
}
