package jsoncodec

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Problem is one thing wrong with a body: the element path of the field ("" for the body as a
// whole) and what is wrong, in words for the caller.
type Problem struct {
	Path    string
	Message string
}

// Error lists every problem found in a body: up to MaxProblems, and how many more were found.
type Error struct {
	Problems []Problem
	Dropped  int // problems found beyond MaxProblems, not listed
}

// MaxProblems bounds the problems one body can report: 100,000 bad students must not produce a
// 10 MB answer.
const MaxProblems = 100

func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Path != "" {
			b.WriteString(p.Path)
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	if e.Dropped > 0 {
		b.WriteString("; " + strconv.Itoa(e.Dropped) + " more problems not listed")
	}
	return b.String()
}

// MaxQuoted bounds how much of the caller's input one problem quotes: a 1 MB key or a
// million-digit number is named by its start, not sent back whole.
const MaxQuoted = 64

// Clip is what a problem shows of input: all of it when it is short, else its first MaxQuoted
// bytes (cut between characters) and "…", with note saying so; bytes that are not UTF-8 become
// U+FFFD, since the answer must be valid text.
func Clip[T string | []byte](input T) (shown, note string) {
	b := input
	if len(b) > MaxQuoted {
		n := MaxQuoted
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		b = b[:n]
		note = " (" + strconv.Itoa(len(input)) + " bytes; the first " + strconv.Itoa(n) + " shown)"
	}
	shown = strings.ToValidUTF8(string(b), "\uFFFD")
	if note != "" {
		shown += "…"
	}
	return shown, note
}

// quoteInput is input as a problem quotes it: "text" (clipped), and the note when clipped.
func quoteInput(input []byte) string {
	shown, note := Clip(input)
	return strconv.Quote(shown) + note
}

// showInput is input as a problem shows it unquoted (a number's text), clipped.
func showInput(input []byte) string {
	shown, note := Clip(input)
	return shown + note
}

// step is one element of a path: a field name, or an index when name is "".
type step struct {
	name  string
	index int
	key   bool // name is a map key, shown as ["name"] (clipped)
}

func pathString(steps []step) string {
	var b []byte
	for _, s := range steps {
		if s.key {
			shown, _ := Clip(s.name)
			b = append(b, '[')
			b = strconv.AppendQuote(b, shown)
			b = append(b, ']')
			continue
		}
		if s.name == "" {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.index), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, s.name...)
	}
	return string(b)
}

// suggest returns the known name nearest to got, or "" when none is near enough to be a typo.
func suggest(got string, known []string) string {
	best, bestDist := "", len(got)/3+2
	for _, k := range known {
		if strings.EqualFold(k, got) {
			return k
		}
		if d := Distance(strings.ToLower(got), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// Distance is the Levenshtein distance of two short strings (field names), for suggestions.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
