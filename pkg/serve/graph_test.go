package serve

import (
	goparser "go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ours is the workspace's import path prefix.
const ours = "github.com/yardstick-dev/yardstick/"

// importsOf lists, by short name, what the non-test files of the package in dir import of ours:
// internal/x as x, pkg/serve/rpcerr as rpcerr, pkg/token as itself, anything of proto/ as proto.
func importsOf(t *testing.T, dir string) []string {
	t.Helper()
	pkgs, err := goparser.ParseDir(gotoken.NewFileSet(), dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, goparser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				rest, ok := strings.CutPrefix(path, ours)
				if !ok {
					continue
				}
				switch {
				case strings.HasPrefix(rest, "pkg/serve/internal/"):
					rest = strings.TrimPrefix(rest, "pkg/serve/internal/")
				case rest == "pkg/serve/rpcerr":
					rest = "rpcerr"
				case strings.HasPrefix(rest, "proto/"):
					rest = "proto"
				}
				seen[rest] = true
			}
		}
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// TestImportGraph: docs/architecture.md's import graph names every package of the frame and,
// for each concern, exactly what it imports of ours; the frame's tree lists exactly the internal
// packages the root package imports.
func TestImportGraph(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "## The import graph")
	block := text[start:]
	block = block[strings.Index(block, "```")+3:]
	block = block[:strings.Index(block, "```")]

	dirs, err := filepath.Glob("internal/*")
	if err != nil {
		t.Fatal(err)
	}
	var internal []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			internal = append(internal, filepath.Base(d))
		}
	}

	arrow := regexp.MustCompile(`^  (\S+)\s+→ (.*)$`)
	listed := map[string][]string{}
	for _, line := range strings.Split(block, "\n") {
		m := arrow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var names []string
		if m[2] != "nothing" {
			for _, n := range strings.Split(m[2], ", ") {
				n, _, _ = strings.Cut(n, " (") // a note after a name
				names = append(names, n)
			}
		}
		slices.Sort(names)
		listed[m[1]] = names
	}
	for _, name := range append(slices.Clone(internal), "rpcerr") {
		dir := filepath.Join("internal", name)
		if name == "rpcerr" {
			dir = "rpcerr"
		}
		got := importsOf(t, dir)
		want, ok := listed[name]
		switch {
		case !ok:
			t.Errorf("docs/architecture.md's graph has no line for %s (it imports %v)", name, got)
		case !slices.Equal(got, want):
			t.Errorf("%s imports %v; docs/architecture.md says %v", name, got, want)
		}
	}

	tree := regexp.MustCompile(`^  [├└]─ internal/(\S+)`)
	var inTree []string
	for _, line := range strings.Split(block, "\n") {
		if m := tree.FindStringSubmatch(line); m != nil {
			inTree = append(inTree, m[1])
		}
	}
	slices.Sort(inTree)
	var rootImports []string
	for _, n := range importsOf(t, ".") {
		if slices.Contains(internal, n) {
			rootImports = append(rootImports, n)
		}
	}
	if !slices.Equal(inTree, rootImports) {
		t.Errorf("pkg/serve imports %v; docs/architecture.md's tree lists %v", rootImports, inTree)
	}
}

// TestTestHelpersOnlyInTests: no file of the frame but a test imports a test helper
// (pkg/token/tokentest, proto/prototest, internal/redistest: the packages named …test), so
// that a helper's fixed secrets and exact-size messages never reach a server.
func TestTestHelpersOnlyInTests(t *testing.T) {
	t.Parallel()
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := goparser.ParseFile(gotoken.NewFileSet(), path, nil, goparser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, ours) && strings.HasSuffix(p, "test") {
				t.Errorf("%s imports the test helper %s; only tests may", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
