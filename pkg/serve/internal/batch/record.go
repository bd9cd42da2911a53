package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/go-faster/jx"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// ErrorAnswer is the status and body the HTTP front would answer for err, byte for byte.
func ErrorAnswer(err error) (status int, body []byte) {
	e := rpcerr.ToHTTP(err)
	return e.Status, rpcerr.JSON(e.Body)
}

// TooLargeAnswer is the body of a line over the default limit, for the ndjson client's own checks.
func TooLargeAnswer() []byte { return lineTooLarge(DefaultMaxLine) }

// lineTooLarge is the body of a line over max bytes: the limit the caller met, stated.
func lineTooLarge(max int) []byte { return rpcerr.JSON(rpcerr.LineTooLarge(int64(max)).Body) }

// Record is one well-formed line: the caller's id token as spelled, the path and the request body.
type Record struct {
	ID   []byte
	Path string
	Body []byte
}

// recordFields are a record's keys, each one's kind of value, and the problem of another kind.
var recordFields = [3]recordField{
	{"id", jx.String, "must be a JSON string (the caller's record id)"},
	{"path", jx.String, "must be a JSON string (a path of this service, such as /api/score/items/bayes)"},
	{"body", jx.Object, "must be a JSON object (the request of the record's path)"},
}

type recordField struct {
	name  string
	kind  jx.Type
	wrong string
}

// ParseRecord reads one line as a record, or says everything wrong with it as the validation
// error of a 400, keyed by the record's field. ID and Body are copies: the line's buffer is reused.
func ParseRecord(line []byte) (Record, error) {
	var p rpcerr.Problems
	d := jx.DecodeBytes(line)
	if d.Next() != jx.Object {
		if !json.Valid(line) {
			return Record{}, notJSON(line)
		}
		p.Add("", `the line is not a record: each line is one JSON object {"id": "...", "path": "...", "body": {...}}`)
		return Record{}, p.Err()
	}
	var rec Record
	var seen [3]bool
	err := d.ObjBytes(func(d *jx.Decoder, key []byte) error {
		k := slices.IndexFunc(recordFields[:], func(f recordField) bool { return f.name == string(key) })
		switch {
		case k < 0:
			field := string(key)
			if len(field) > 64 {
				field = "" // a megabyte key is no field name: the message quotes it clipped
			}
			p.Add(field, "unknown field %q%s", string(key), suggest(string(key)))
			return d.Skip()
		case seen[k]:
			p.Add(recordFields[k].name, "duplicate field %q", recordFields[k].name)
			return d.Skip()
		}
		seen[k] = true
		return readField(d, k, &rec, &p)
	})
	if err == nil {
		err = onlyValue(d)
	}
	if err != nil {
		// jx is as strict as encoding/json, which says what is wrong in the words callers know.
		if !json.Valid(line) {
			return Record{}, notJSON(line)
		}
		p.Add("", "the line could not be read: %v", err) // valid JSON nested deeper than jx reads
	}
	for i, f := range recordFields {
		if !seen[i] {
			p.Add(f.name, "is required")
		}
	}
	if err := p.Err(); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// onlyValue checks that nothing but spaces follows the line's one value.
func onlyValue(d *jx.Decoder) error {
	err := d.Skip()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil:
		return errors.New("more than one value")
	}
	return err
}

func readField(d *jx.Decoder, k int, rec *Record, p *rpcerr.Problems) error {
	f := recordFields[k]
	if d.Next() != f.kind {
		p.Add(f.name, "%s", f.wrong)
		return d.Skip()
	}
	if f.name == "path" {
		s, err := d.Str()
		rec.Path = s
		return err
	}
	raw, err := d.Raw()
	switch {
	case err != nil:
		return err
	case f.name == "body":
		rec.Body = bytes.Clone(raw)
	case !utf8.Valid(raw):
		p.Add("id", "must be valid UTF-8")
	default:
		rec.ID = bytes.Clone(raw)
	}
	return nil
}

// notJSON is the 400 of a line that is not JSON, saying where it breaks.
func notJSON(line []byte) error {
	if err := BOMProblem(line); err != nil {
		return err
	}
	var raw json.RawMessage
	if syntax, ok := errors.AsType[*json.SyntaxError](json.Unmarshal(line, &raw)); ok {
		return rpcerr.Invalid("", "the line is not JSON: %s (at byte %d)", syntax.Error(), syntax.Offset)
	}
	return rpcerr.Invalid("", "the line is not JSON")
}

// suggest is `; did you mean "x"?` for a key one or two edits away from a record field.
func suggest(key string) string {
	if len(key) > 16 {
		return "" // no record field is that long: not a near miss (and no distance to compute)
	}
	for _, f := range recordFields {
		if jsoncodec.Distance(key, f.name) <= 2 {
			return fmt.Sprintf("; did you mean %q?", f.name)
		}
	}
	return ""
}

func appendRecordAnswer(dst, id []byte, status int, body []byte) []byte {
	dst = append(append(dst, `{"id":`...), id...)
	return appendStatusBody(dst, status, body)
}

func appendLineAnswer(dst []byte, line, status int, body []byte) []byte {
	dst = strconv.AppendInt(append(dst, `{"line":`...), int64(line), 10)
	return appendStatusBody(dst, status, body)
}

func appendStatusBody(dst []byte, status int, body []byte) []byte {
	dst = strconv.AppendInt(append(dst, `,"status":`...), int64(status), 10)
	dst = append(append(dst, `,"body":`...), body...)
	return append(dst, "}\n"...)
}

var internalBody = func() []byte { _, b := ErrorAnswer(rpcerr.Internal()); return b }() // the documented 500

// checkAnswer makes sure a dispatcher's answer can sit inside one line: JSON (a broken one
// would break every line after it for the caller) without a newline.
func checkAnswer(status int, answer []byte) (int, []byte) {
	answer = bytes.TrimRight(answer, " \t\r\n")
	if status < 100 || status > 599 || !json.Valid(answer) {
		return http.StatusInternalServerError, internalBody
	}
	if bytes.IndexByte(answer, '\n') >= 0 || bytes.IndexByte(answer, '\r') >= 0 {
		var c bytes.Buffer
		_ = json.Compact(&c, answer) // valid JSON: cannot fail
		answer = c.Bytes()
	}
	return status, answer
}
