package jsoncodec

import (
	"unicode/utf8"

	"github.com/go-faster/jx"
)

// The first pass over a body scans it directly: most bodies are valid JSON, without escapes, that
// break no wire rule, and for those the tokenizer's general machinery (an iterator per object,
// depth counting, a type lookup per byte) is most of the decoding's cost. The scanner takes only
// that happy path. At the first thing it does not take — an escape, a problem of any kind, a value
// to skip, anything that is not JSON — it bails: the decoder stops, the caller resets the message
// and decodes the body again with go-faster/jx (Retry), which finds and words every problem. So
// problems come from one place only, and a body costs a second pass only when it has one.

// bail ends the scanner's pass.
func (d *Decoder) bail() {
	d.bailed, d.stop = true, true
}

// Bailed reports whether the scanner gave up on the body: the caller resets the message, calls
// Retry and decodes again.
func (d *Decoder) Bailed() bool { return d.bailed }

// Retry starts the body again with the tokenizer, which reports what the scanner bailed on.
func (d *Decoder) Retry() {
	d.fast, d.bailed, d.stop, d.pos, d.info = false, false, false, 0, nil
	d.problems, d.dropped, d.path = nil, 0, d.path[:0]
	d.d.ResetBytes(d.data)
}

// Slow makes the decoder use the tokenizer from the start (the protoreflect path).
func (d *Decoder) Slow() { d.fast = false }

// ws skips JSON's white space.
func (d *Decoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// peek is the JSON type of the next value, past white space (jx.Invalid: none).
func (d *Decoder) peek() jx.Type {
	d.ws()
	if d.pos == len(d.data) {
		return jx.Invalid
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return jx.Object
	case c == '[':
		return jx.Array
	case c == '"':
		return jx.String
	case c == '-' || c >= '0' && c <= '9':
		return jx.Number
	case c == 't' || c == 'f':
		return jx.Bool
	case c == 'n':
		return jx.Null
	}
	return jx.Invalid
}

// Peek is the JSON type of the next value (for the protoreflect path).
func (d *Decoder) Peek() jx.Type {
	if d.fast {
		return d.peek()
	}
	return d.d.Next()
}

// literal consumes word (true, false, null) if it comes next.
func (d *Decoder) literal(word string) bool {
	if len(d.data)-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return true
	}
	d.bail()
	return false
}

// str scans a string without escapes or control characters, in valid UTF-8, and returns its bytes
// (the opening quote is next).
func (d *Decoder) str() ([]byte, bool) {
	start := d.pos + 1
	i := start
	for i < len(d.data) && d.data[i] != '"' && d.data[i] != '\\' && d.data[i] >= ' ' {
		i++
	}
	if i == len(d.data) || d.data[i] != '"' || !utf8.Valid(d.data[start:i]) {
		d.bail()
		return nil, false
	}
	d.pos = i + 1
	return d.data[start:i], true
}

// number scans a number in JSON's grammar and returns its text.
func (d *Decoder) number() ([]byte, bool) {
	b, i := d.data, d.pos
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		d.bail()
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			d.bail()
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digits(b, i); j > i {
			i = j
		} else {
			d.bail()
			return nil, false
		}
	}
	d.pos = i
	return b[start:i], true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// Iter walks the keys of an object: More moves to the next key (Key) and leaves its value next.
type Iter struct {
	jx    jx.ObjIter
	key   []byte
	first bool
}

// Key is the current key.
func (it *Iter) Key() []byte {
	if it.key != nil {
		return it.key
	}
	return it.jx.Key()
}

// moreFast is More on the scanner.
func (d *Decoder) moreFast(it *Iter) bool {
	d.ws()
	if d.pos == len(d.data) {
		d.bail()
		return false
	}
	c := d.data[d.pos]
	switch {
	case c == '}':
		d.pos++
		return false
	case it.first:
		it.first = false
	case c == ',':
		d.pos++
		d.ws()
	default:
		d.bail()
		return false
	}
	if d.pos == len(d.data) || d.data[d.pos] != '"' {
		d.bail()
		return false
	}
	key, ok := d.str()
	if !ok {
		return false
	}
	d.ws()
	if d.pos == len(d.data) || d.data[d.pos] != ':' {
		d.bail()
		return false
	}
	d.pos++
	it.key = key
	return true
}

// nextElementFast moves past the separator before the next element of an array, reporting false
// at its end.
func (d *Decoder) nextElementFast(e *Elements) bool {
	d.ws()
	if d.pos == len(d.data) {
		d.bail()
		return false
	}
	switch c := d.data[d.pos]; {
	case c == ']':
		d.pos++
		return false
	case e.i < 0:
		return true
	case c == ',':
		d.pos++
		return true
	}
	d.bail()
	return false
}

// positionalFast is Positional on the scanner: exactly len(names) numbers, or it bails.
func (d *Decoder) positionalFast(names []string) ([]float64, bool) {
	d.pos++ // '['
	values := d.values[:0]
	for {
		d.ws()
		if d.pos < len(d.data) && d.data[d.pos] == ']' && len(values) == len(names) {
			d.pos++
			d.values = values
			return values, true
		}
		if len(values) > 0 {
			if d.pos == len(d.data) || d.data[d.pos] != ',' {
				break
			}
			d.pos++
			d.ws()
		}
		if len(values) == len(names) || d.peek() != jx.Number {
			break
		}
		text, ok := d.number()
		if !ok {
			return nil, false
		}
		v, err := parseFloat(text)
		if err != nil {
			break
		}
		values = append(values, v)
	}
	d.bail()
	return nil, false
}

// maxSkipDepth bounds the nesting of a value the scanner skips; deeper ones go to the tokenizer.
const maxSkipDepth = 32

// skipFast passes over a value (an ignored field's), as strictly as the rest of the scanner.
func (d *Decoder) skipFast(depth int) {
	switch t := d.peek(); {
	case t == jx.String:
		d.str()
	case t == jx.Number:
		d.number()
	case t == jx.Bool && d.data[d.pos] == 't':
		d.literal("true")
	case t == jx.Bool:
		d.literal("false")
	case t == jx.Null:
		d.literal("null")
	case depth >= maxSkipDepth:
		d.bail()
	case t == jx.Object:
		d.pos++
		it := Iter{first: true}
		for !d.stop && d.moreFast(&it) {
			d.skipFast(depth + 1)
		}
	case t == jx.Array:
		d.pos++
		e := Elements{i: -1}
		for !d.stop && d.nextElementFast(&e) {
			e.i++
			d.skipFast(depth + 1)
		}
	default:
		d.bail()
	}
}
