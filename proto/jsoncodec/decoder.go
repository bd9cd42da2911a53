package jsoncodec

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-faster/jx"
)

// Message is what the generated code gives each message type it supports.
type Message interface {
	// DecodeJSONWire reads a JSON object (the decoder's next value) into the message.
	DecodeJSONWire(d *Decoder)
	// AppendJSONWire appends the message as protojson with EmitUnpopulated writes it, without
	// white space.
	AppendJSONWire(b []byte) ([]byte, error)
	// JSONWireInfo describes the message type to the rare paths (unknown keys, positional arrays).
	JSONWireInfo() *MessageInfo
}

// Positional is a Message whose fields are all doubles: the Rules may let it arrive as an array
// of its fields' values, in field order.
type Positional interface {
	Message
	// DecodeJSONWirePositional sets the fields from values, one per field in field order.
	DecodeJSONWirePositional(d *Decoder, values []float64)
}

// MessageInfo is what the rare paths need to know of a message type.
type MessageInfo struct {
	FullName string   // "yardstick.scoring.v1.ItemResult": how Rules name it
	Names    []string // the fields' JSON names, in field order (paths, suggestions)
	Doubles  bool     // every field is a double (not a list): it may be Positional
}

// Decoder reads one body. It is not safe for concurrent use; Get and Put keep decoders between
// bodies, with the room left in their arenas.
type Decoder struct {
	d        *jx.Decoder
	data     []byte // the whole body
	text     string // a copy of data, made at the first string cut from it
	rules    *Rules
	path     []step
	problems []Problem
	dropped  int
	stop     bool // a problem that leaves the tokenizer nowhere to resume from
	fast     bool // the scanner's pass (scan.go), not the tokenizer's
	bailed   bool // the scanner gave up: the body is to be decoded again
	pos      int  // the scanner's position in data

	// The field being read (set by Field): the rare paths consult the rules with it.
	info  *MessageInfo
	field int

	values []float64 // Positional's

	arenas
}

var decoders = sync.Pool{New: func() any { return &Decoder{d: jx.GetDecoder()} }}

// Get is a decoder for body under rules (nil: no rules beyond protojson's). The decoder's strings
// never share body's memory: the caller may reuse body once it has put the decoder back.
func Get(body []byte, rules *Rules) *Decoder {
	d := decoders.Get().(*Decoder)
	d.d.ResetBytes(body)
	d.data, d.rules, d.fast, d.pos = body, rules, true, 0
	return d
}

// Put returns d for another body; nothing it decoded is touched (a used arena slot is never
// handed out again).
func Put(d *Decoder) {
	d.d.ResetBytes(nil)
	d.data, d.text, d.rules, d.problems, d.dropped, d.stop, d.info = nil, "", nil, nil, 0, false, nil
	d.bailed = false
	d.path = d.path[:0]
	decoders.Put(d)
}

// Err is the problems found, as an *Error, or nil.
func (d *Decoder) Err() error {
	if len(d.problems) == 0 {
		return nil
	}
	return &Error{Problems: d.problems, Dropped: d.dropped}
}

// Problem records a problem at the current path.
func (d *Decoder) Problem(msg string) {
	if d.fast {
		d.bail() // the tokenizer's pass finds it again, with the rest
		return
	}
	if len(d.problems) >= MaxProblems {
		d.dropped++
		return
	}
	d.problems = append(d.problems, Problem{Path: pathString(d.path), Message: msg})
}

// PushName, PushIndex and PushKey add a field name, a list index or a map key to the path; Pop
// removes the last.
func (d *Decoder) PushName(name string) { d.path = append(d.path, step{name: name}) }
func (d *Decoder) PushIndex(i int)      { d.path = append(d.path, step{index: i}) }
func (d *Decoder) PushKey(key string)   { d.path = append(d.path, step{name: key, key: true}) }
func (d *Decoder) Pop()                 { d.path = d.path[:len(d.path)-1] }

// Syntax records a tokenizer error (malformed JSON) and stops decoding; nil is no error.
func (d *Decoder) Syntax(err error) {
	if err == nil || d.stop {
		return
	}
	if d.fast {
		d.bail()
		return
	}
	saved := d.path
	d.path = nil
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		d.Problem("request body is not valid JSON: it ends too early")
	} else {
		d.Problem("request body is not valid JSON: " + syntaxMessage(err))
	}
	d.path = saved
	d.stop = true
}

// syntaxMessage is the tokenizer's error without the "array: " or "object: " it adds for each
// level the error is nested in (70 KB of them for a body nested 10,000 deep).
func syntaxMessage(err error) string {
	msg := err.Error()
	for {
		rest, ok := strings.CutPrefix(msg, "array: ")
		if !ok {
			rest, ok = strings.CutPrefix(msg, "object: ")
		}
		if !ok {
			break
		}
		msg = rest
	}
	if strings.HasSuffix(msg, "depth: maximum") { // jx's limit, as "inc: depth: maximum"
		return "arrays and objects nest too deeply"
	}
	return msg
}

// Skip passes over a value the decoder reported a problem with.
func (d *Decoder) Skip() {
	if d.fast {
		if !d.stop { // an ignored field's value (after a problem, the scanner has bailed)
			d.skipFast(0)
		}
		return
	}
	d.Syntax(d.d.Skip())
}

// Start begins reading the body: it reports whether it starts with a JSON object, which the
// caller then reads (DecodeJSONWire, or the protoreflect path) before calling End. An empty body
// is an empty object; any other value is a problem.
func (d *Decoder) Start() bool {
	if d.fast {
		if d.peek() == jx.Object {
			return true
		}
		d.bail() // an empty body, or not an object: the tokenizer's pass says which
		return false
	}
	switch d.d.Next() {
	case jx.Object:
		return true
	case jx.Invalid:
		if len(bytes.TrimLeft(d.data, " \t\r\n")) > 0 {
			d.Skip()
		}
	default:
		d.Problem("request body must be a JSON object")
	}
	return false
}

// End refuses anything but white space after the object the caller read.
func (d *Decoder) End() {
	if !d.stop {
		d.trailing()
	}
}

// trailing refuses anything but white space after the object.
func (d *Decoder) trailing() {
	if d.fast {
		if d.ws(); d.pos != len(d.data) {
			d.bail()
		}
		return
	}
	if d.d.Next() == jx.Invalid {
		if err := d.d.Skip(); err == nil || errors.Is(err, io.EOF) {
			return
		}
	}
	d.path = nil
	d.Problem("unexpected data after the JSON object")
}

// Object starts reading an object (the decoder's next value): the generated loop calls More and
// Key on the iterator, and ends with EndObject.
func (d *Decoder) Object() Iter {
	if d.fast {
		d.pos++ // '{', which the caller has seen
		return Iter{first: true}
	}
	it, err := d.d.ObjIter()
	d.Syntax(err)
	return Iter{jx: it}
}

// More moves it to the next key, reporting false at the object's end or when decoding stopped.
func (d *Decoder) More(it *Iter) bool {
	switch {
	case d.stop:
		return false
	case d.fast:
		return d.moreFast(it)
	}
	return it.jx.Next()
}

// EndObject ends the object read with it.
func (d *Decoder) EndObject(it *Iter) {
	if !d.fast {
		d.Syntax(it.jx.Err())
	}
}

// Field starts reading the i-th field of a message of type info, whose bit in seen records that
// it appeared: it pushes the field's name on the path (the caller pops it), refuses a second
// appearance, takes null as unset (as protojson does), and otherwise returns the value's JSON
// type with ok true.
func (d *Decoder) Field(info *MessageInfo, seen *uint64, i int) (t jx.Type, ok bool) {
	d.path = append(d.path, step{name: info.Names[i]})
	t = d.Peek()
	bit := uint64(1) << (uint(i) % 64)
	switch {
	case *seen&bit != 0:
		d.Problem("appears more than once")
		d.Skip()
		return t, false
	case t == jx.Null:
		*seen |= bit
		d.Null()
		return t, false
	}
	*seen |= bit
	d.info, d.field = info, i
	return t, true
}

// Null consumes a null (the next value).
func (d *Decoder) Null() {
	if d.fast {
		d.literal("null")
		return
	}
	d.Syntax(d.d.Null())
}

// Unknown handles a key that names no field of a message of type info: an alias's field name is
// returned for the caller to read instead (unless key is already an alias's target: aliased); an
// ignored field is skipped; any other key is a problem naming it, with the nearest known name.
func (d *Decoder) Unknown(info *MessageInfo, key []byte, aliased bool) (alias []byte) {
	if r := d.rules; r != nil {
		if to, ok := r.aliases[info.FullName][string(key)]; ok && !aliased {
			return to
		}
		if r.ignored[info.FullName][string(key)] {
			d.Skip()
			return nil
		}
	}
	d.UnknownKey(key, info.Names)
	return nil
}

// UnknownKey reports key, which names no field (names are the known ones), and skips its value.
func (d *Decoder) UnknownKey(key []byte, names []string) {
	if len(d.problems) >= MaxProblems {
		d.dropped++ // no more names and suggestions: a body of unknown keys costs no more
		d.Skip()
		return
	}
	// The name is shown as the path and in the message: a 1 MB name must not make a 2 MB answer,
	// and a name that is not UTF-8 could not be sent back at all.
	name, note := Clip(key)
	d.PushName(name)
	msg := `unknown field "` + name + `"` + note
	switch {
	case !utf8.Valid(key):
		msg += ": a field name must be valid UTF-8 text"
	case note == "": // a typo of a known name is short
		if s := suggest(name, names); s != "" {
			msg += `; did you mean "` + s + `"?`
		}
	}
	d.Problem(msg)
	d.Pop()
	d.Skip()
}

// share is b, a string's bytes, as a string: cut from the decoder's one copy of the body when b
// lies in the body as written (no copy per string), else copied. A slice of the body ends where
// the body's capacity ends, so its capacity gives its offset; the address comparison confirms it.
func (d *Decoder) share(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	off := cap(d.data) - cap(b)
	if off < 0 || off+len(b) > len(d.data) || &d.data[off] != &b[0] {
		return string(b)
	}
	if d.text == "" {
		d.text = string(d.data)
	}
	return d.text[off : off+len(b)]
}

// arena hands out pointers to values of T from chunks that are never moved, so a request's
// optional scalars cost one allocation per chunk instead of one each.
type arena[T any] struct{ chunk []T }

func (a *arena[T]) put(v T) *T {
	if len(a.chunk) == cap(a.chunk) {
		a.chunk = make([]T, 0, min(max(2*cap(a.chunk), 16), 1<<14))
	}
	a.chunk = append(a.chunk, v)
	return &a.chunk[len(a.chunk)-1]
}

// take hands out k values of T side by side (a packed list), zero, with no room to grow into
// the next slots: an append copies them out. A list larger than a chunk gets its own.
func (a *arena[T]) take(k int) []T {
	if k > 1<<12 {
		return make([]T, k)
	}
	if cap(a.chunk)-len(a.chunk) < k {
		a.chunk = make([]T, 0, max(min(max(2*cap(a.chunk), 16), 1<<14), k))
	}
	n := len(a.chunk)
	a.chunk = a.chunk[:n+k]
	return a.chunk[n : n+k : n+k]
}

// arenas are a decoder's, one per scalar type of the contract, kept with it across requests.
type arenas struct {
	strs    arena[string]
	int32s  arena[int32]
	int64s  arena[int64]
	doubles arena[float64]
	bools   arena[bool]
}

// Float64Ptr, Int32Ptr, ... are pointers to v for optional fields, from the decoder's arenas.
func (a *arenas) Float64Ptr(v float64) *float64 { return a.doubles.put(v) }
func (a *arenas) Int32Ptr(v int32) *int32       { return a.int32s.put(v) }
func (a *arenas) Int64Ptr(v int64) *int64       { return a.int64s.put(v) }
func (a *arenas) StringPtr(v string) *string    { return a.strs.put(v) }
func (a *arenas) BoolPtr(v bool) *bool          { return a.bools.put(v) }
