package main

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	t.Parallel()
	// Expected anchors are GitHub's (github-slugger's fixtures and headings of this repository).
	for _, tc := range []struct{ heading, want string }{
		{"Decisions beyond the contract", "decisions-beyond-the-contract"},
		{"Two commands", "two-commands"},
		{"POST /authToken", "post-authtoken"},
		{"`make run` and `make ci`", "make-run-and-make-ci"},
		{"The error body", "the-error-body"},
		{"4. Growth (§4)", "4-growth-4"},
		{"snake_case stays", "snake_case-stays"},
		{"_emphasis_ goes", "emphasis-goes"},
		{"**bold** and *em*", "bold-and-em"},
		{"A [link](x.md) in it", "a-link-in-it"},
		{"Ünïcödé Wörds", "ünïcödé-wörds"},
		{"two  spaces", "two--spaces"},
		{"hyphen-ated -- twice", "hyphen-ated----twice"},
		{"Q&amp;A", "qa"},
		{"C++ / Go: 100%", "c--go-100"},
		{"`/api/score/items/ids/bayes`", "apiscoreitemsidsbayes"},
		{"<code>x</code> tag", "x-tag"},
		{`escaped \_underscore\_`, "escaped-_underscore_"},
	} {
		t.Run(tc.heading, func(t *testing.T) {
			t.Parallel()
			if got := Slug(plain(tc.heading)); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	doc := Parse(strings.Join([]string{
		"# Title", // 1
		"",        // 2
		"See [a](a.md#x) and ![i](img/p.png \"title\").", // 3
		"```sh",                               // 4
		"[not](a link.md)",                    // 5
		"# not a heading",                     // 6
		"```",                                 // 7
		"`[code](span.md)` but [b](<b c.md>)", // 8
		"Title",                               // 9: setext, same text as line 1
		"=====",                               // 10
		"[ref]: ref.md#y",                     // 11
		`<a href="h.md">h</a> <img src="s.png"> <a id="Custom-Id"></a>`, // 12
		"Paren [p](f(1).md) end", // 13
		"    # indented is code", // 14
		"Sub",                    // 15
		"---",                    // 16
	}, "\n"))
	wantLinks := []Link{{"a.md#x", 3}, {"img/p.png", 3}, {"b c.md", 8}, {"ref.md#y", 11}, {"h.md", 12}, {"s.png", 12}, {"f(1).md", 13}}
	if !reflect.DeepEqual(doc.Links, wantLinks) {
		t.Errorf("got links %v; want %v", doc.Links, wantLinks)
	}
	var anchors []string
	for a := range doc.Anchors {
		anchors = append(anchors, a)
	}
	sort.Strings(anchors)
	// Four spaces of indentation make "# indented is code" code, not a heading.
	wantAnchors := []string{"custom-id", "sub", "title", "title-1"}
	if !reflect.DeepEqual(anchors, wantAnchors) {
		t.Errorf("got anchors %v; want %v", anchors, wantAnchors)
	}
}

func TestDuplicateHeadings(t *testing.T) {
	t.Parallel()
	doc := Parse("# A\n## A\n### A\n# A-1\n")
	// github-slugger: a, a-1, a-2, then "A-1" is taken so it becomes a-1-1.
	for _, want := range []string{"a", "a-1", "a-2", "a-1-1"} {
		if !doc.Anchors[want] {
			t.Errorf("anchor %q missing; got %v", want, doc.Anchors)
		}
	}
	if doc.Anchors["a-3"] {
		t.Errorf("anchor a-3 present; got %v", doc.Anchors)
	}
}

// TestCheck runs the checker on a small tree with one link of every kind, good and broken.
func TestCheck(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", strings.Join([]string{
		"# Top",
		"## Two words",
		"[ok file](docs/api.md)", // 3
		"[ok anchor](docs/api.md#post-authtoken)",             // 4
		"[bad anchor](docs/api.md#post-auth-token)",           // 5
		"[missing](docs/nope.md)",                             // 6
		"[outside](../shared/SPEC.md)",                        // 7
		"[self](#two-words) [self bad](#three)",               // 8
		"[dir](docs) [dir anchor](docs#x)",                    // 9
		"[ext](https://example.com/x#y) [mail](mailto:a@b.c)", // 10
		"[code line](go.mod#L3) [root](/docs/api.md#errors)",  // 11
		"[escaped](my%20file.md)",                             // 12
		"[upper case anchor](#TOP)",                           // 13
	}, "\n"))
	write("docs/api.md", "# API\n## POST /authToken\n## Errors\n[up](../README.md#top)\n")
	write("go.mod", "module x\n")
	write("my file.md", "text\n")
	write("bin/ignored.md", "[broken](nowhere.md)\n")
	write(".git/ignored.md", "[broken](nowhere.md)\n")

	problems, files, links, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`README.md:5: docs/api.md#post-auth-token: no heading or anchor "#post-auth-token" in api.md`,
		"README.md:6: docs/nope.md: no such file or directory",
		"README.md:7: ../shared/SPEC.md: points outside the repository",
		`README.md:8: #three: no heading or anchor "#three" in README.md`,
		"README.md:9: docs#x: an anchor on a directory",
	}
	if !reflect.DeepEqual(problems, want) {
		t.Errorf("got problems\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
	if files != 3 || links != 14 {
		t.Errorf("got %d files, %d links; want 3 files, 14 relative links", files, links)
	}
}

func TestExternal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		target string
		want   bool
	}{
		{"https://x.y/z", true},
		{"mailto:a@b", true},
		{"docs/a.md", false},
		{"#x", false},
		{"a.md#b:c", false},
		{"./x:y.md", false},
	} {
		t.Run(tc.target, func(t *testing.T) {
			t.Parallel()
			if got := external(tc.target); got != tc.want {
				t.Errorf("got %v; want %v", got, tc.want)
			}
		})
	}
}
