package jsonwire

import (
	"fmt"
	"slices"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// Options are the per-message wire rules beyond protojson's. Messages are named by full name
// ("yardstick.scoring.v1.ItemResult"), fields by their JSON name.
type Options struct {
	// Aliases maps a message to extra spellings of its fields: alias -> JSON name.
	Aliases map[protoreflect.FullName]map[string]string
	// Ignored lists fields a message accepts and drops (extras the original API's examples send).
	Ignored map[protoreflect.FullName][]string
	// Positional messages may also arrive as an array of their fields' values in field order.
	Positional map[protoreflect.FullName]bool
	// NumberAsText lists string fields that also take a JSON number, kept as its literal text.
	NumberAsText map[protoreflect.FullName][]string
	// MaxListLen, when above 0, ends decoding at the first list more than one entry longer than
	// it: the services refuse it anyway (one entry over still lets them say by how much), and
	// decoding it whole would cost memory in proportion to a hostile body's length.
	MaxListLen int
	// ListLimits are particular lists' limits (message, JSON field name) in place of MaxListLen.
	ListLimits map[protoreflect.FullName]map[string]int
}

// Codec decodes and encodes messages under one set of Options. It is safe for concurrent use; the
// plan of each message type is built once.
type Codec struct {
	opts  Options
	rules *jsoncodec.Rules // opts, for the generated codecs
	plans sync.Map         // protoreflect.FullName -> *plan
	mu    sync.Mutex
}

// New returns a codec applying opts.
func New(opts Options) *Codec {
	return &Codec{opts: opts, rules: jsoncodec.NewRules(jsoncodec.RuleSet{
		Aliases:      byName(opts.Aliases),
		Ignored:      byName(opts.Ignored),
		Positional:   byName(opts.Positional),
		NumberAsText: byName(opts.NumberAsText),
		MaxListLen:   opts.MaxListLen,
		ListLimits:   byName(opts.ListLimits),
	})}
}

// byName is m keyed by plain strings, as package jsoncodec names messages.
func byName[V any](m map[protoreflect.FullName]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}

// plan is what the codec knows of one message type, for the protoreflect path (messages without a
// generated codec).
type plan struct {
	fields     []*fieldPlan          // declaration order: protojson's output order
	byName     map[string]*fieldPlan // JSON name, proto name, aliases
	names      []string              // JSON names, for suggestions
	ignored    map[string]bool
	positional bool
	supported  bool // false with kinds this codec does not write (buildField): they take protojson's path
}

type fieldPlan struct {
	fd           protoreflect.FieldDescriptor
	bit          uint64 // for duplicate detection
	jsonName     string
	key          []byte // `"jsonName":`
	list         bool
	presence     bool // proto3 optional (scalar or message): omitted when unset, as protojson does
	numberAsText bool
	maxLen       int   // lists: the limit; decoding ends past maxLen+1 entries (0: no limit)
	sub          *plan // message fields
}

func (c *Codec) planOf(md protoreflect.MessageDescriptor) *plan {
	if p, ok := c.plans.Load(md.FullName()); ok {
		return p.(*plan)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.build(md, map[protoreflect.FullName]*plan{})
}

// build makes the plan of md and of the messages it holds; building maps plans in progress, for
// recursive messages.
func (c *Codec) build(md protoreflect.MessageDescriptor, building map[protoreflect.FullName]*plan) *plan {
	if p, ok := c.plans.Load(md.FullName()); ok {
		return p.(*plan)
	}
	if p, ok := building[md.FullName()]; ok {
		return p
	}
	fields := md.Fields()
	p := &plan{byName: map[string]*fieldPlan{}, ignored: map[string]bool{}, positional: c.opts.Positional[md.FullName()],
		supported: fields.Len() <= 64} // one bit a field, for duplicates
	building[md.FullName()] = p
	for _, name := range c.opts.Ignored[md.FullName()] {
		p.ignored[name] = true
	}
	asText := c.opts.NumberAsText[md.FullName()]
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		f, supported := c.buildField(fd, i, slices.Contains(asText, fd.JSONName()), building)
		p.supported = p.supported && supported
		p.fields = append(p.fields, f)
		p.names = append(p.names, f.jsonName)
		p.byName[f.jsonName] = f
		p.byName[string(fd.Name())] = f
	}
	for alias, target := range c.opts.Aliases[md.FullName()] {
		if f, ok := p.byName[target]; ok {
			p.byName[alias] = f
		}
	}
	for _, f := range p.fields {
		if k := f.fd.Kind(); f.list || k != protoreflect.DoubleKind && k != protoreflect.FloatKind {
			p.positional = false // only all-number messages can arrive as a number array
		}
	}
	c.plans.Store(md.FullName(), p)
	return p
}

// buildField makes the plan of the field fd, the i-th of its message (asText: the options read it
// as a number-as-text field), and reports whether this codec reads and writes its kind.
func (c *Codec) buildField(fd protoreflect.FieldDescriptor, i int, asText bool, building map[protoreflect.FullName]*plan) (*fieldPlan, bool) {
	f := &fieldPlan{
		fd:           fd,
		bit:          1 << (uint(i) % 64),
		jsonName:     fd.JSONName(),
		key:          []byte(fmt.Sprintf("%q:", fd.JSONName())),
		list:         fd.IsList(),
		presence:     fd.HasPresence() && !fd.IsList() && (fd.Message() == nil || fd.ContainingOneof() != nil),
		numberAsText: asText && fd.Kind() == protoreflect.StringKind,
	}
	if f.list {
		f.maxLen = c.opts.MaxListLen
		if n, ok := c.opts.ListLimits[fd.ContainingMessage().FullName()][f.jsonName]; ok {
			f.maxLen = n
		}
	}
	supported := !(fd.IsMap() && !scalarMap(fd) || (fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic()))
	switch fd.Kind() {
	case protoreflect.MessageKind:
		if fd.Message().FullName().Parent() == "google.protobuf" { // well-known types: protojson's own forms
			return f, false
		}
		f.sub = c.build(fd.Message(), building)
		supported = supported && f.sub.supported
	case protoreflect.GroupKind, protoreflect.BytesKind, protoreflect.EnumKind:
		supported = false
	}
	return f, supported
}

// scalarMap reports whether a map field has string keys and number, string or bool values: the
// maps this codec reads and writes (an object such as strand → share).
func scalarMap(fd protoreflect.FieldDescriptor) bool {
	if fd.MapKey().Kind() != protoreflect.StringKind {
		return false
	}
	switch fd.MapValue().Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind, protoreflect.BytesKind, protoreflect.EnumKind:
		return false
	}
	return true
}
