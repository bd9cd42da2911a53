package batch

import "io"

// What the client (cmd/yardstick-batch, through the public package ndjson) shares with the
// engine, so that it checks its input by the engine's own rules: a line the engine would refuse
// is answered the same way without being sent.

// LineReader cuts a body into lines exactly as the engine does.
type LineReader struct{ lr *lineReader }

// NewLineReader reads r in lines of at most max bytes.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{lr: newLineReader(r, max)}
}

// Next is the next line (valid until the following call), its 1-based number, whether it was
// over the limit (then skipped, line nil), or io.EOF at the end.
func (l *LineReader) Next() (line []byte, num int, tooLong bool, err error) { return l.lr.next() }

// Blank reports whether the engine leaves a line unanswered.
func Blank(line []byte) bool { return blank(line) }

// Record is a well-formed record line: ID is the id's JSON string token as the caller spelled
// it, Body the request object's bytes.
type Record struct {
	ID   []byte
	Path string
	Body []byte
}

// ParseRecord reads a line as the engine does; the error is the validation error the engine
// would answer the line with (see ErrorAnswer).
func ParseRecord(line []byte) (Record, error) {
	r, err := parseRecord(line)
	return Record{ID: r.id, Path: r.path, Body: r.body}, err
}

// TooLargeAnswer is the body of a line over the limit.
func TooLargeAnswer() []byte { return append([]byte(nil), tooLargeBody...) }
