// Command checklinks fails when a relative link or #anchor in the repository's Markdown does not
// resolve: the file or directory must exist inside the repository, and an anchor must name a
// heading of the target Markdown file as GitHub renders it (or an explicit id/name anchor).
// External links (http:, https:, mailto:, …) are not fetched. It is `make check-links`.
//
// Usage: checklinks [ROOT]   (ROOT defaults to ".")
//
// Written in Go with the standard library, not a Markdown library: only links, headings and code
// need recognising, and GitHub's anchor rules (slugs) are a few lines; no network tool is needed.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	problems, files, links, err := Check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "checklinks:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "checklinks: %d broken link(s) in %d Markdown files\n", len(problems), files)
		os.Exit(1)
	}
	fmt.Printf("checklinks: %d relative links in %d Markdown files resolve\n", links, files)
}

// skipDir reports directories that hold no documentation of the repository: VCS data, hidden
// tool state, build output and vendored packages.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") && name != "." || name == "bin" || name == "node_modules" || name == "testdata"
}

// Check reads every Markdown file under root and returns one line per broken link
// ("file:line: link: reason"), the number of files read and of relative links checked.
func Check(root string) (problems []string, files, links int, err error) {
	root, err = filepath.Abs(root)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("root %q: %w", root, err)
	}
	var mds []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.EqualFold(filepath.Ext(path), ".md") {
			mds = append(mds, path)
		}
		return nil
	})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("walk %s: %w", root, err)
	}
	sort.Strings(mds)
	docs := map[string]*Doc{} // parsed Markdown files by absolute path, read once
	load := func(path string) (*Doc, error) {
		if d, ok := docs[path]; ok {
			return d, nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		d := Parse(string(raw))
		docs[path] = d
		return d, nil
	}
	for _, path := range mds {
		d, err := load(path)
		if err != nil {
			return nil, 0, 0, err
		}
		rel, _ := filepath.Rel(root, path)
		for _, l := range d.Links {
			if external(l.Target) {
				continue
			}
			links++
			if reason := resolve(root, path, l.Target, load); reason != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", filepath.ToSlash(rel), l.Line, l.Target, reason))
			}
		}
	}
	return problems, len(mds), links, nil
}

// external reports a link with a scheme (https:, mailto:, …), which is not checked.
func external(target string) bool {
	i := strings.IndexAny(target, ":/?#")
	return i > 0 && target[i] == ':'
}

// resolve returns why target, linked from the Markdown file from, does not resolve ("" if it does).
func resolve(root, from, target string, load func(string) (*Doc, error)) string {
	path, frag, _ := strings.Cut(target, "#")
	path, _, _ = strings.Cut(path, "?")
	path = unescape(path)
	dest := from
	if path != "" {
		if strings.HasPrefix(path, "/") {
			dest = filepath.Join(root, filepath.FromSlash(path)) // GitHub: / is the repository root
		} else {
			dest = filepath.Join(filepath.Dir(from), filepath.FromSlash(path))
		}
		if r, err := filepath.Rel(root, dest); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "points outside the repository"
		}
		info, err := os.Stat(dest)
		if err != nil {
			return "no such file or directory"
		}
		if info.IsDir() {
			if frag != "" {
				return "an anchor on a directory"
			}
			return ""
		}
	}
	if frag == "" || !strings.EqualFold(filepath.Ext(dest), ".md") {
		return "" // line anchors of code files (#L10) are GitHub's, not checked
	}
	d, err := load(dest)
	if err != nil {
		return err.Error()
	}
	if !d.Anchors[strings.ToLower(unescape(frag))] {
		return fmt.Sprintf("no heading or anchor %q in %s", "#"+frag, filepath.Base(dest))
	}
	return ""
}

// unescape decodes %XX escapes (a link to "my%20file.md"); a malformed escape is kept as written.
func unescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}
