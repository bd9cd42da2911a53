package main

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Link is one link target written in a Markdown file, with its 1-based line.
type Link struct {
	Target string
	Line   int
}

// Doc is what checking needs of one Markdown file: the links it writes and the anchors it defines
// (lower-case, as GitHub matches them).
type Doc struct {
	Links   []Link
	Anchors map[string]bool
}

var (
	fenceRe   = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	atxRe     = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextRe  = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	refDefRe  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:[ \t]*<?([^ \t>]+)>?`)
	htmlRefRe = regexp.MustCompile(`(?i)<(?:a|img|source)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']*)["']`)
	htmlIDRe  = regexp.MustCompile(`(?i)<[a-z][^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']`)
	listRe    = regexp.MustCompile(`^ {0,3}(?:[-*+]|\d+[.)])(?:[ \t]|$)`)
	entityRe  = regexp.MustCompile(`&(?:[a-zA-Z]+|#[0-9]+|#[xX][0-9a-fA-F]+);`)
	tagRe     = regexp.MustCompile(`</?[a-zA-Z][^>]*>`)
	imageRe   = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	linkRe    = regexp.MustCompile(`\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])`)
)

// Parse reads a Markdown file: links outside code, headings (ATX and setext) turned into GitHub's
// anchors, and explicit id/name anchors of HTML elements.
func Parse(text string) *Doc {
	d := &Doc{Anchors: map[string]bool{}}
	s := newSlugger()
	lines := strings.Split(text, "\n")
	var fence string // the open fence's marker; "" outside fenced code
	prevText := ""   // the previous line when it can be a setext heading's text
	for i, line := range lines {
		line = strings.TrimRight(line, "\r")
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
			case m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(line) == m[1]:
				fence = ""
			}
			prevText = ""
			continue
		}
		if fence != "" {
			continue
		}
		if m := atxRe.FindStringSubmatch(line); m != nil {
			d.Anchors[s.slug(plain(m[1]))] = true
			d.addLinks(line, i+1)
			prevText = ""
			continue
		}
		if m := setextRe.FindStringSubmatch(line); m != nil && prevText != "" {
			d.Anchors[s.slug(plain(prevText))] = true
			prevText = ""
			continue
		}
		if m := refDefRe.FindStringSubmatch(line); m != nil {
			d.Links = append(d.Links, Link{m[1], i + 1})
			prevText = ""
			continue
		}
		d.addLinks(line, i+1)
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "|") || strings.HasPrefix(t, ">") || listRe.MatchString(line) || strings.HasPrefix(line, "    ") {
			prevText = ""
		} else {
			prevText = t
		}
	}
	return d
}

// addLinks records the inline links, images and HTML href/src of one line (code spans excluded),
// and the line's explicit HTML anchors.
func (d *Doc) addLinks(line string, n int) {
	prose := stripCode(line)
	for _, t := range inlineTargets(prose) {
		d.Links = append(d.Links, Link{t, n})
	}
	for _, m := range htmlRefRe.FindAllStringSubmatch(prose, -1) {
		d.Links = append(d.Links, Link{m[1], n})
	}
	for _, m := range htmlIDRe.FindAllStringSubmatch(prose, -1) {
		d.Anchors[strings.ToLower(m[1])] = true
	}
}

// stripCode blanks out code spans (`x`, “ x “), whose brackets are not links.
func stripCode(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] == '`' {
			j++
		}
		ticks := line[i:j]
		end := strings.Index(line[j:], ticks)
		if end < 0 {
			b.WriteString(ticks) // no closing run: literal backticks
			i = j
			continue
		}
		b.WriteString(strings.Repeat(" ", len(ticks)*2+end))
		i = j + end + len(ticks)
	}
	return b.String()
}

// inlineTargets returns the destinations of [text](dest) and ![alt](dest) in a line: a <dest> in
// angle brackets, or up to the first space or unbalanced ")", with an optional title after it.
func inlineTargets(s string) []string {
	var out []string
	for i := 0; i+1 < len(s); i++ {
		if s[i] != ']' || s[i+1] != '(' || (i > 0 && s[i-1] == '\\') {
			continue
		}
		rest := s[i+2:]
		rest = strings.TrimLeft(rest, " \t")
		if strings.HasPrefix(rest, "<") {
			if end := strings.IndexByte(rest, '>'); end > 0 {
				out = append(out, rest[1:end])
			}
			continue
		}
		depth, end := 0, len(rest)
	scan:
		for j, c := range rest {
			switch {
			case c == '(':
				depth++
			case c == ')' && depth == 0, c == ' ', c == '\t':
				end = j
				break scan
			case c == ')':
				depth--
			}
		}
		if t := rest[:end]; t != "" {
			out = append(out, t)
		}
	}
	return out
}

// plain is a heading's text as GitHub renders it before making the anchor: code spans keep their
// content, links keep their text, images, HTML tags, entities, escapes and emphasis
// underscores go.
func plain(h string) string {
	var b strings.Builder
	for i := 0; i < len(h); {
		if h[i] != '`' {
			j := strings.IndexByte(h[i:], '`')
			if j < 0 {
				j = len(h) - i
			}
			b.WriteString(prose(h[i : i+j]))
			i += j
			continue
		}
		j := i
		for j < len(h) && h[j] == '`' {
			j++
		}
		ticks := h[i:j]
		end := strings.Index(h[j:], ticks)
		if end < 0 {
			b.WriteString(ticks)
			i = j
			continue
		}
		code := h[j : j+end]
		if len(code) > 1 && code[0] == ' ' && code[len(code)-1] == ' ' {
			code = code[1 : len(code)-1]
		}
		b.WriteString(code)
		i = j + end + len(ticks)
	}
	return b.String()
}

// prose renders the non-code part of a heading to its text.
func prose(s string) string {
	s = imageRe.ReplaceAllString(s, "")
	s = linkRe.ReplaceAllString(s, "$1")
	s = tagRe.ReplaceAllString(s, "")
	s = entityRe.ReplaceAllString(s, "")
	var b strings.Builder
	r := []rune(s)
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c == '\\' && i+1 < len(r) && r[i+1] < unicode.MaxASCII && (unicode.IsPunct(r[i+1]) || unicode.IsSymbol(r[i+1])) {
			i++
			b.WriteRune(r[i]) // an escaped character is literal
			continue
		}
		if c == '_' && emphasis(r, i) {
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// emphasis reports whether the underscore at r[i] delimits emphasis: it starts or ends a word.
// An underscore inside a word (snake_case) is text.
func emphasis(r []rune, i int) bool {
	j := i
	for j > 0 && r[j-1] == '_' {
		j--
	}
	k := i
	for k+1 < len(r) && r[k+1] == '_' {
		k++
	}
	before, after := ' ', ' '
	if j > 0 {
		before = r[j-1]
	}
	if k+1 < len(r) {
		after = r[k+1]
	}
	boundary := func(c rune) bool { return unicode.IsSpace(c) || unicode.IsPunct(c) }
	opens := !unicode.IsSpace(after) && boundary(before)
	closes := !unicode.IsSpace(before) && boundary(after)
	return opens || closes
}

// slugger makes GitHub's heading anchors (github-slugger): lower case; letters, marks, numbers,
// "_" and "-" kept; each space becomes "-"; everything else dropped; a repeated anchor gets "-1",
// "-2", … in order of appearance.
type slugger struct{ seen map[string]int }

func newSlugger() *slugger { return &slugger{seen: map[string]int{}} }

func (s *slugger) slug(text string) string {
	base := Slug(text)
	result := base
	for {
		if _, taken := s.seen[result]; !taken {
			break
		}
		s.seen[base]++
		result = base + "-" + strconv.Itoa(s.seen[base])
	}
	s.seen[result] = 0
	return result
}

// Slug is GitHub's anchor of one heading text (no de-duplication).
func Slug(text string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case c == ' ':
			b.WriteByte('-')
		case c == '-' || c == '_' || unicode.IsLetter(c) || unicode.IsNumber(c) || unicode.IsMark(c):
			b.WriteRune(c)
		}
	}
	return b.String()
}
