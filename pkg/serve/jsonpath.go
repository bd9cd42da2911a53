package serve

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// jsonPathAt names the field at a 1-based line and column of a JSON document, such as
// `items[3].result`, so that a type error reported by the decoder by position is reported to the
// caller by field path. It returns "" when the position cannot be placed.
func jsonPathAt(doc []byte, line, col int) string {
	offset := offsetOf(doc, line, col)
	if offset < 0 {
		return ""
	}
	type frame struct {
		array bool
		index int
		key   string
	}
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // 1e999 is a token here, not an overflow
	path := func() string {
		var b []byte
		for _, f := range stack {
			if f.array {
				b = append(b, '[')
				b = strconv.AppendInt(b, int64(f.index), 10)
				b = append(b, ']')
			} else if f.key != "" {
				if len(b) > 0 {
					b = append(b, '.')
				}
				b = append(b, f.key...)
			}
		}
		return string(b)
	}
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		end := int(dec.InputOffset())
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if end-1 >= offset {
					return path()
				}
				stack = append(stack, frame{array: t == '['})
				expectKey = t == '{'
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		default:
			if expectKey {
				if s, ok := t.(string); ok {
					stack[len(stack)-1].key = s
				}
				expectKey = false
				continue
			}
			if end > offset {
				return path()
			}
		}
		// A value ended: next comes a key (objects) or the next element (arrays).
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				expectKey = true
			}
		}
	}
}

// offsetOf is the byte offset of a 1-based line and column.
func offsetOf(doc []byte, line, col int) int {
	l, start := 1, 0
	for i, c := range doc {
		if l == line {
			break
		}
		if c == '\n' {
			l++
			start = i + 1
		}
	}
	if l != line {
		return -1
	}
	return start + col - 1
}
