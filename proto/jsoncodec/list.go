package jsoncodec

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-faster/jx"
)

// Elements walks the array of a list field: Next reads past each element in turn, with its index
// on the path, refusing null elements and ending decoding one entry past the list's limit.
type Elements struct {
	it      jx.ArrIter
	t       jx.Type
	i       int
	limit   int
	wanted  string // what an element must be: "a number"
	started bool   // an index is on the path
}

// List starts reading the list field being read (its value, of JSON type t, must be an array);
// wanted is what its elements must be ("a number"). ok is false when it is not an array
// (reported).
func (d *Decoder) List(t jx.Type, wanted string) (e Elements, ok bool) {
	var err error
	if t != jx.Array {
		d.Problem("must be an array")
		d.Skip()
		return e, false
	}
	e = Elements{wanted: wanted, i: -1}
	if d.fast {
		d.pos++ // '['
	} else if e.it, err = d.d.ArrIter(); err != nil {
		d.Syntax(err)
		return e, false
	}
	if d.info != nil {
		e.limit = d.rules.ListLimit(d.info.FullName, d.info.Names[d.field])
	}
	return e, true
}

// ListOf is List for the protoreflect path, which names the field and its limit itself.
func (d *Decoder) ListOf(t jx.Type, wanted string, limit int) (e Elements, ok bool) {
	d.info = nil
	e, ok = d.List(t, wanted)
	e.limit = limit
	return e, ok
}

// Next moves to the next element that is not null and returns its JSON type; ok is false at the
// end of the list (or when decoding stopped). The element's index is on the path until the next
// call.
func (d *Decoder) Next(e *Elements) (t jx.Type, ok bool) {
	for {
		if e.started {
			d.Pop()
			e.started = false
		}
		switch {
		case d.stop:
			return 0, false
		case d.fast:
			if !d.nextElementFast(e) {
				return 0, false
			}
		case !e.it.Next():
			d.Syntax(e.it.Err())
			return 0, false
		}
		e.i++
		if e.limit > 0 && e.i > e.limit {
			n := strconv.Itoa(e.limit)
			d.Problem("holds more than " + n + " entries; the limit is " + n)
			d.stop = true
			return 0, false
		}
		d.PushIndex(e.i)
		e.started = true
		if t = d.Peek(); t != jx.Null {
			return t, true
		}
		d.Problem("must be " + e.wanted + ", not null")
		d.Skip()
	}
}

// Doubles, Int32s, Int64s, Strings and Bools read list fields of scalars.
func (d *Decoder) Doubles(t jx.Type) []float64 {
	return scalars(d, t, "a number", func(d *Decoder, t jx.Type) (float64, bool) { return d.ReadFloat(t, false) })
}

func (d *Decoder) Int32s(t jx.Type) []int32 {
	return scalars(d, t, "a number", func(d *Decoder, t jx.Type) (int32, bool) {
		n, ok := d.ReadInt(t, math.MinInt32, math.MaxInt32)
		return int32(n), ok
	})
}

func (d *Decoder) Int64s(t jx.Type) []int64 {
	return scalars(d, t, "a number", func(d *Decoder, t jx.Type) (int64, bool) { return d.ReadInt(t, math.MinInt64, math.MaxInt64) })
}

func (d *Decoder) Strings(t jx.Type) []string {
	asText := d.asText()
	return scalars(d, t, "a string", func(d *Decoder, t jx.Type) (string, bool) { return d.ReadString(t, asText) })
}

func (d *Decoder) Bools(t jx.Type) []bool {
	return scalars(d, t, "true or false", (*Decoder).ReadBool)
}

func scalars[T any](d *Decoder, t jx.Type, wanted string, read func(*Decoder, jx.Type) (T, bool)) []T {
	e, ok := d.List(t, wanted)
	if !ok {
		return nil
	}
	var out []T
	for t, ok := d.Next(&e); ok; t, ok = d.Next(&e) {
		if v, ok := read(d, t); ok {
			out = append(out, v)
		}
	}
	return out
}

// Map reads a map field of string keys (an object such as strand → share), each value with read.
// A key given twice is a problem, as a repeated field is.
func Map[V any](d *Decoder, t jx.Type, read func(*Decoder, jx.Type) (V, bool)) map[string]V {
	if t != jx.Object {
		d.Problem("must be an object")
		d.Skip()
		return nil
	}
	out := map[string]V{}
	it := d.Object()
	for d.More(&it) {
		key := it.Key()
		d.PushKey(string(key))
		switch _, dup := out[string(key)]; {
		case !utf8.Valid(key):
			// protojson refuses it too; kept, it could not be written back (the path shows it
			// with U+FFFD).
			d.Problem("a key must be valid UTF-8 text")
			d.Skip()
		case dup:
			d.Problem("appears more than once")
			d.Skip()
		default:
			k := string(key)
			if v, ok := read(d, d.Peek()); ok {
				out[k] = v
			}
		}
		d.Pop()
	}
	d.EndObject(&it)
	return out
}

// ReadDouble, ReadInt32, ... are the readers Map takes.
func ReadDouble(d *Decoder, t jx.Type) (float64, bool) { return d.ReadFloat(t, false) }
func ReadInt32(d *Decoder, t jx.Type) (int32, bool) {
	n, ok := d.ReadInt(t, math.MinInt32, math.MaxInt32)
	return int32(n), ok
}
func ReadInt64(d *Decoder, t jx.Type) (int64, bool) {
	return d.ReadInt(t, math.MinInt64, math.MaxInt64)
}
func ReadString(d *Decoder, t jx.Type) (string, bool) { return d.ReadString(t, false) }
func ReadBool(d *Decoder, t jx.Type) (bool, bool)     { return d.ReadBool(t) }

// Sub reads a message field's value, of JSON type t, into m: an object, or for a Positional
// message the rules let arrive so, a number array.
func (d *Decoder) Sub(m Message, t jx.Type) {
	switch t {
	case jx.Object:
		m.DecodeJSONWire(d)
		return
	case jx.Array:
		if p, ok := m.(Positional); ok && d.rules.IsPositional(m.JSONWireInfo().FullName) {
			if values, ok := d.Positional(m.JSONWireInfo().Names); ok {
				p.DecodeJSONWirePositional(d, values)
			}
			return
		}
	}
	d.Problem("must be an object")
	d.Skip()
}

// Positional reads a number array holding one number for each of names (a message's fields, in
// order); anything else is a problem naming them. The values are valid until the next call.
func (d *Decoder) Positional(names []string) ([]float64, bool) {
	if d.fast {
		return d.positionalFast(names)
	}
	raw, err := d.d.Raw()
	if err != nil {
		d.Syntax(err)
		return nil, false
	}
	sub := jx.GetDecoder()
	defer jx.PutDecoder(sub)
	sub.ResetBytes(raw)
	values := d.values[:0] // kept by the decoder: the values go to an interface method, so escape
	ok := true
	iter, err := sub.ArrIter()
	for err == nil && iter.Next() {
		if sub.Next() != jx.Number || len(values) == len(names) {
			ok = false
			err = sub.Skip()
			continue
		}
		v, ferr := sub.Float64()
		if ferr != nil || math.IsInf(v, 0) {
			ok = false
			continue
		}
		values = append(values, v)
	}
	if err == nil {
		err = iter.Err()
	}
	if err != nil || !ok || len(values) != len(names) {
		d.Problem("an array entry must hold exactly " + strconv.Itoa(len(names)) + " numbers: " + strings.Join(names, ", "))
		return nil, false
	}
	d.values = values
	return values, true
}

// Pool keeps the elements of lists of messages of type T between requests: they come from chunks
// that are never moved and never reused (an element is handed out once), so a 40-element list
// costs no allocation of its own most of the time, and their pointers are gathered and copied
// once into an exact-size list. A chunk lives as long as any element from it; handlers do not keep
// requests past their answer.
type Pool[T any] struct{ p sync.Pool }

type gathered[T any] struct {
	chunk []T
	ptrs  []*T
}

// maxChunkElements bounds a chunk: a 100,000-student list takes 25 chunks.
const maxChunkElements = 4096

func (g *gathered[T]) next() *T {
	if len(g.chunk) == cap(g.chunk) {
		g.chunk = make([]T, 0, min(max(2*cap(g.chunk), 16), maxChunkElements))
	}
	g.chunk = g.chunk[:len(g.chunk)+1]
	return &g.chunk[len(g.chunk)-1]
}

// Messages reads a list field of messages of type T (of JSON type t), elements from pool.
func Messages[T any, P interface {
	*T
	Message
}](d *Decoder, t jx.Type, pool *Pool[T]) []P {
	e, ok := d.List(t, "an object")
	if !ok {
		return nil
	}
	g, _ := pool.p.Get().(*gathered[T])
	if g == nil {
		g = &gathered[T]{}
	}
	for t, ok := d.Next(&e); ok; t, ok = d.Next(&e) {
		m := g.next()
		g.ptrs = append(g.ptrs, m)
		d.Sub(P(m), t)
	}
	var out []P
	if len(g.ptrs) > 0 && !d.stop {
		out = make([]P, len(g.ptrs))
		for i, m := range g.ptrs {
			out[i] = m
		}
	}
	clear(g.ptrs) // the pool must not keep a request's messages alive
	g.ptrs = g.ptrs[:0]
	pool.p.Put(g)
	return out
}
