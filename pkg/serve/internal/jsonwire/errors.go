package jsonwire

import "github.com/yardstick-dev/yardstick/proto/jsoncodec"

// The problems a body can have are the codec run time's (package jsoncodec), which the generated
// codecs report too; these names keep the frame's callers in one package.

// Problem is one thing wrong with a body: the element path of the field ("" for the body as a
// whole) and what is wrong, in words for the caller.
type Problem = jsoncodec.Problem

// Error lists every problem found in a body: up to MaxProblems, and how many more were found.
type Error = jsoncodec.Error

// MaxProblems bounds the problems one body can report: 100,000 bad students must not produce a
// 10 MB answer.
const MaxProblems = jsoncodec.MaxProblems

// MaxQuoted bounds how much of the caller's input one problem quotes.
const MaxQuoted = jsoncodec.MaxQuoted

// Clip is what a problem shows of input: all of it when it is short, else its first MaxQuoted
// bytes (cut between characters) and "…", with note saying so.
func Clip[T string | []byte](input T) (shown, note string) { return jsoncodec.Clip(input) }

// Distance is the Levenshtein distance of two short strings (field names), for suggestions.
func Distance(a, b string) int { return jsoncodec.Distance(a, b) }
