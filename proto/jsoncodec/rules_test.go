package jsoncodec

import "testing"

// TestRules: a list's own limit wins over the general one, a list without one (or a list of
// the same name in another message) takes the general one, and no rules (nil) mean no limit and
// no rule of any kind.
func TestRules(t *testing.T) {
	t.Parallel()
	r := NewRules(RuleSet{
		Aliases:      map[string]map[string]string{"m.A": {"itemid": "id"}},
		Ignored:      map[string][]string{"m.A": {"extra"}},
		Positional:   map[string]bool{"m.P": true},
		NumberAsText: map[string][]string{"m.A": {"scaleScore"}},
		MaxListLen:   1000,
		ListLimits:   map[string]map[string]int{"m.A": {"items": 10}},
	})
	var none *Rules
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"a list's own limit", r.ListLimit("m.A", "items"), 10},
		{"the general limit", r.ListLimit("m.A", "cutLevels"), 1000},
		{"another message's list of the same name", r.ListLimit("m.B", "items"), 1000},
		{"no rules: no limit", none.ListLimit("m.A", "items"), 0},
		{"alias", string(r.aliases["m.A"]["itemid"]), "id"},
		{"ignored", r.ignored["m.A"]["extra"], true},
		{"not ignored elsewhere", r.ignored["m.B"]["extra"], false},
		{"positional", r.IsPositional("m.P"), true},
		{"not positional", r.IsPositional("m.A"), false},
		{"no rules: not positional", none.IsPositional("m.P"), false},
		{"number as text", r.NumberAsText("m.A", "scaleScore"), true},
		{"no rules: no number as text", none.NumberAsText("m.A", "scaleScore"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.got != tc.want {
				t.Errorf("got %v; want %v", tc.got, tc.want)
			}
		})
	}
}
