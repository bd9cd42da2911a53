package token

import (
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"
)

// AllPrograms, as a client's only program, gives it every content program: for an operator's
// own clients.
const AllPrograms = "*"

// programPattern is a program name as content bundles write it (pkg/measure holds the same rule;
// this package does not import the content code).
var programPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// programs reads a client's programs: a list of distinct program names, or AllPrograms alone;
// an empty list is shared content only, as leaving the key out is. A problem is reported at the
// line of its value.
func (p *problems) programs(n *yaml.Node, what string) []string {
	if n.Kind != yaml.SequenceNode {
		p.add(n.Line, `%s: programs must be a list of program names, or ["*"] for every program`, what)
		return nil
	}
	out := []string{}
	for _, item := range n.Content {
		s, ok := p.str(item, what+": each program")
		switch {
		case !ok:
		case s == AllPrograms && len(n.Content) > 1:
			p.add(item.Line, `%s: "*" (every program) stands alone in programs`, what)
		case s != AllPrograms && !programPattern.MatchString(s):
			p.add(item.Line, "%s: program %q must be 1 to 64 of a-z 0-9 . _ - starting with a letter or digit", what, s)
		case slices.Contains(out, s):
			p.add(item.Line, "%s: program %q is repeated", what, s)
		default:
			out = append(out, s)
		}
	}
	return out
}
