package servetest

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// The two partners' programs of ProgramsContent.
const (
	ProgramA = "acme"
	ProgramB = "beta"
)

// ProgramContent is the demo bundle shared out between two partners' programs and shared content.
type ProgramContent struct {
	Dir   string            // the bundle, with the program columns
	Owner map[string]string // the program of each item, form and link id ("" for shared content)
	files map[string][]byte // the demo's files
}

// Programs writes the demo bundle with a program column: of the items in file order, the second
// of every four is acme's and the third beta's; form FORM-READ-G3 is acme's and FORM-MATH-G2
// beta's (their items are their program's or shared, an item of a shared form or of both
// programs' forms shared); link STATE-READ-2026 is acme's and NATL-MATH-PT beta's. Everything
// else is shared.
func Programs(t testing.TB) ProgramContent {
	t.Helper()
	pc := ProgramContent{Owner: map[string]string{}, files: map[string][]byte{}}
	demo := measure.DemoFiles()
	entries, err := fs.ReadDir(demo, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if pc.files[e.Name()], err = fs.ReadFile(demo, e.Name()); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, r := range rows(pc.files["items.csv"]) {
		pc.Owner[r[0]] = []string{"", ProgramA, ProgramB, ""}[n%4]
		n++
	}
	formOwner := map[string]string{"FORM-READ-G3": ProgramA, "FORM-MATH-G2": ProgramB}
	inForms := map[string][]string{}
	for _, r := range rows(pc.files["forms.csv"]) {
		pc.Owner[r[0]] = formOwner[r[0]]
		inForms[r[2]] = append(inForms[r[2]], formOwner[r[0]])
	}
	for item, programs := range inForms {
		slices.Sort(programs)
		if programs = slices.Compact(programs); len(programs) == 1 {
			pc.Owner[item] = programs[0]
		} else {
			pc.Owner[item] = ""
		}
	}
	for _, r := range rows(pc.files["links.csv"]) {
		pc.Owner[r[0]] = map[string]string{"STATE-READ-2026": ProgramA, "NATL-MATH-PT": ProgramB}[r[0]]
	}
	pc.Dir = pc.write(t, true, nil)
	return pc
}

// Single writes the bundle as a client seeing programs sees it, as a bundle of its own without
// programs: the single-tenant deployment of that client's content.
func (pc ProgramContent) Single(t testing.TB, programs ...string) string {
	t.Helper()
	return pc.write(t, false, func(program string) bool { return program == "" || slices.Contains(programs, program) })
}

// write writes the bundle into a new directory named bundle (the catalog names a bundle by its
// directory's name): with the program columns, or only the content keep keeps without them.
func (pc ProgramContent) write(t testing.TB, withPrograms bool, keep func(program string) bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range pc.files {
		owned := map[string]int{"items.csv": 0, "forms.csv": 0, "links.csv": 0, "link_points.csv": 0}
		col, ok := owned[name]
		if ok {
			data = pc.rewrite(data, name, col, withPrograms, keep)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// rewrite is a file of owned rows (their id in column col) with a program column, or with the
// rows keep leaves out removed.
func (pc ProgramContent) rewrite(data []byte, name string, col int, withPrograms bool, keep func(string) bool) []byte {
	var out []string
	header := true
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "#") || line == "":
			out = append(out, line)
			continue
		case header:
			header = false
			if withPrograms && name != "link_points.csv" {
				line += ",program"
			}
			out = append(out, line)
			continue
		}
		fields := strings.Split(line, ",")
		program := pc.Owner[fields[col]]
		switch {
		case withPrograms && name == "items.csv" && len(fields) == 4:
			line += ",," + program
		case withPrograms && name != "link_points.csv":
			line += "," + program
		case !withPrograms && !keep(program):
			continue
		}
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// rows are the data rows of a bundle file, split at commas (the demo's fields hold none).
func rows(data []byte) [][]string {
	var out [][]string
	header := true
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if header {
			header = false
			continue
		}
		out = append(out, strings.Split(line, ","))
	}
	return out
}

// Hidden are the ids of the content a client seeing programs does not see, sorted.
func (pc ProgramContent) Hidden(programs ...string) []string {
	var out []string
	for id, p := range pc.Owner {
		if p != "" && !slices.Contains(programs, p) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Login is a token for a client of the service's clients file.
func (s *Server) Login(clientID, secret string) string {
	s.t.Helper()
	body, err := json.Marshal(map[string]string{"clientId": clientID, "clientSecret": secret})
	if err != nil {
		s.t.Fatal(err)
	}
	r := s.Do(http.MethodPost, "/authToken", "application/json", string(body))
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &tok) != nil {
		s.t.Fatalf("authToken %s: got %d %s", clientID, r.Status, r.Body)
	}
	return tok.AccessToken
}

// UnaryGRPC is rec's answer as a unary gRPC call with ctx's metadata.
func (s *Server) UnaryGRPC(ctx context.Context, rec GRPCRecord) (proto.Message, error) {
	return s.unaryGRPC(ctx, rec)
}
