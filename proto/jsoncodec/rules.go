package jsoncodec

// Rules are the per-message wire rules beyond protojson's, compiled once (NewRules) for the
// decoders' rare paths. Messages are named by full name, fields by their JSON name.
type Rules struct {
	aliases      map[string]map[string][]byte
	ignored      map[string]map[string]bool
	positional   map[string]bool
	numberAsText map[string]map[string]bool
	maxListLen   int
	listLimits   map[string]map[string]int
}

// RuleSet is the rules as a service states them (jsonwire.Options holds the same).
type RuleSet struct {
	Aliases      map[string]map[string]string // message -> alias -> JSON name
	Ignored      map[string][]string          // message -> fields accepted and dropped
	Positional   map[string]bool              // messages that may arrive as a number array
	NumberAsText map[string][]string          // message -> string fields that take a number
	MaxListLen   int                          // above 0: a list ends one entry past it
	ListLimits   map[string]map[string]int    // message -> list field (JSON name) -> its limit
}

// NewRules compiles s.
func NewRules(s RuleSet) *Rules {
	r := &Rules{
		aliases:      map[string]map[string][]byte{},
		ignored:      map[string]map[string]bool{},
		positional:   s.Positional,
		numberAsText: map[string]map[string]bool{},
		maxListLen:   s.MaxListLen,
		listLimits:   s.ListLimits,
	}
	for msg, as := range s.Aliases {
		r.aliases[msg] = map[string][]byte{}
		for alias, to := range as {
			r.aliases[msg][alias] = []byte(to)
		}
	}
	for msg, names := range s.Ignored {
		r.ignored[msg] = set(names)
	}
	for msg, names := range s.NumberAsText {
		r.numberAsText[msg] = set(names)
	}
	return r
}

func set(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

// IsPositional reports whether message may arrive as a number array.
func (r *Rules) IsPositional(message string) bool { return r != nil && r.positional[message] }

// NumberAsText reports whether the string field (a JSON name) of message takes a JSON number.
func (r *Rules) NumberAsText(message, field string) bool {
	return r != nil && r.numberAsText[message][field]
}

// ListLimit is the limit of the list field (a JSON name) of message (0: none).
func (r *Rules) ListLimit(message, field string) int {
	if r == nil {
		return 0
	}
	if n, ok := r.listLimits[message][field]; ok {
		return n
	}
	return r.maxListLen
}
