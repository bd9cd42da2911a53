package token

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// client is one entry of the clients file. It is immutable once loaded.
type client struct {
	id          string
	hash        phc
	services    []string
	permissions []string
	limits      Limits   // its share of the service; zero fields take the service's defaults
	programs    []string // the content programs it sees besides shared content; "*" alone: all
	line        int      // of its entry in the clients file; 0 for the dev-mode demo client
	// fingerprint names the secret hash; tokens carry it, so a re-keyed client's old tokens
	// fail on every replica, and after a restart too.
	fingerprint string
	scopes      map[string][]string // service -> the permissions a token for it may carry now
}

// newClient builds a client outside a clients file (the dev-mode demo client), whose permissions
// are PermAll alone: it belongs to every service, so no owners are needed to scope it. It sees
// every program, as an operator's own client does.
func newClient(id string, h phc, services, permissions []string, line int) *client {
	c := &client{id: id, hash: h, services: services, permissions: permissions, line: line, programs: []string{AllPrograms}}
	c.derive(nil)
	return c
}

// derive computes the fingerprint and the scopes from the loaded fields and the owners of the
// known permissions.
func (c *client) derive(o owners) {
	sum := sha256.Sum256([]byte(c.hash.String()))
	c.fingerprint = base64.RawURLEncoding.EncodeToString(sum[:12])
	c.scopes = map[string][]string{}
	for _, s := range c.services {
		c.scopes[s] = o.scope(c.permissions, s)
	}
}

func (c *client) mayUse(service string) bool { return slices.Contains(c.services, service) }

// Limits on the clients file: a mistaken path (a log file, a disk image) fails fast.
const (
	maxClientsFileBytes = 4 << 20
	maxClientIDLen      = 128
	maxProblems         = 20
)

var clientIDPattern = regexp.MustCompile(`^[A-Za-z0-9._@:-]{1,128}$`)

// readClientsFile reads the clients file at path, unparsed, and refuses it when it changed while
// it was read (its inode, size or mtime before the read differ from after it, or the bytes read
// are not its size): a file written in place is read half-written now and then, and half a list
// of clients parses as a whole one. The last good list then stays until the next reload finds the
// file still.
func readClientsFile(path string, afterRead func()) ([]byte, error) {
	before, statErr := os.Stat(path) // follows symlinks, as the read does
	data, err := readCapped(path, maxClientsFileBytes)
	if err != nil {
		return nil, fmt.Errorf("clients file: %w", err)
	}
	if afterRead != nil {
		afterRead()
	}
	after, err := os.Stat(path)
	if statErr != nil || err != nil || !os.SameFile(before, after) || before.Size() != after.Size() ||
		!before.ModTime().Equal(after.ModTime()) || int64(len(data)) != after.Size() {
		return nil, fmt.Errorf("clients file: %s: %w", path, ErrFileChanging)
	}
	return data, nil
}

// ErrFileChanging is the error of a clients file that changed while it was read.
var ErrFileChanging = errors.New("changed while it was read; write the new file beside it and rename it over the old one (an atomic replace, as Kubernetes updates a Secret volume); the last good clients stay")

// parseClients validates the clients file held in data against the services and the contract's
// permissions; name is used in file:line messages. Every problem found is reported (up to
// maxProblems), joined into one error.
func parseClients(name string, data []byte) ([]*client, error) {
	perms, err := contractOwners()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:1: the file is empty; want a mapping with the key clients", name)
		}
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(name, err)
		}
		return nil, fmt.Errorf("%s:%d: more than one YAML document", name, extra.Line)
	}
	p := &problems{file: name, perms: perms, permList: perms.list()}
	clients := p.document(doc.Content[0])
	if err := p.err(); err != nil {
		return nil, err
	}
	return clients, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns "yaml: line 3: msg" into "name:3: msg".
func yamlError(name string, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s", name, m[1], m[2])
	}
	return fmt.Errorf("%s: %w", name, err)
}

// problems collects file:line messages.
type problems struct {
	file     string
	perms    owners // the known permissions
	permList string // and their names, for the messages
	list     []problem
}

type problem struct {
	line int
	msg  string
}

func (p *problems) add(line int, format string, args ...any) {
	p.list = append(p.list, problem{line, fmt.Sprintf(format, args...)})
}

// err lists the problems in file order, at most maxProblems of them; without a file name
// (ClientEntry checking its own output) the messages go without file:line.
func (p *problems) err() error {
	slices.SortStableFunc(p.list, func(a, b problem) int { return a.line - b.line })
	var errs []error
	for i, pr := range p.list {
		if i == maxProblems {
			errs = append(errs, fmt.Errorf("%s:%d: %d more problems not shown", p.file, pr.line, len(p.list)-i))
			break
		}
		if p.file == "" {
			errs = append(errs, errors.New(pr.msg))
		} else {
			errs = append(errs, fmt.Errorf("%s:%d: %s", p.file, pr.line, pr.msg))
		}
	}
	return errors.Join(errs...)
}

// aliases reports every alias in the tree: an alias makes two entries share one value, which
// hides what each client really gets.
func (p *problems) aliases(n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		p.add(n.Line, "YAML aliases (*name) are not supported; write the value out")
	}
	for _, c := range n.Content {
		p.aliases(c)
	}
}

func (p *problems) document(root *yaml.Node) []*client {
	if p.aliases(root); len(p.list) > 0 {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		p.add(root.Line, "the top level must be a mapping with the key clients")
		return nil
	}
	f := p.fields(root, "top level", "clients")
	list := f["clients"]
	switch {
	case list == nil:
		p.add(root.Line, "missing key clients")
		return nil
	case list.Kind == yaml.ScalarNode && list.ShortTag() == "!!null":
		return nil // "clients:" with nothing under it: no clients
	case list.Kind != yaml.SequenceNode:
		p.add(list.Line, "clients must be a list")
		return nil
	}
	var clients []*client
	firstLine := map[string]int{}
	for i, item := range list.Content {
		c, ok := p.client(item, i)
		if c == nil || c.id == "" {
			continue
		}
		if line, dup := firstLine[c.id]; dup {
			p.add(item.Line, "clientId %q is repeated (first at line %d)", c.id, line)
			continue
		}
		firstLine[c.id] = item.Line
		if ok {
			c.derive(p.perms)
			clients = append(clients, c)
		}
	}
	return clients
}

var (
	clientKeys   = []string{"clientId", "secretHash", "services", "permissions"}
	optionalKeys = []string{"limits", "programs"}
	limitKeys    = []string{"rate", "burst", "concurrency"}
)

// client reads one entry; ok is false when it has a problem (already reported). The client
// may still carry its id, for the check of repeated ids.
func (p *problems) client(n *yaml.Node, index int) (c *client, ok bool) {
	what := fmt.Sprintf("clients[%d]", index)
	if n.Kind != yaml.MappingNode {
		p.add(n.Line, "%s must be a mapping with the keys %s", what, strings.Join(clientKeys, ", "))
		return nil, false
	}
	before := len(p.list)
	f := p.fields(n, what, append(clientKeys[:len(clientKeys):len(clientKeys)], optionalKeys...)...)
	for _, k := range clientKeys {
		if f[k] == nil {
			p.add(n.Line, "%s: missing %s", what, k)
		}
	}
	c = &client{line: n.Line}
	if v := f["clientId"]; v != nil {
		if id, ok := p.str(v, what+".clientId"); ok {
			if clientIDPattern.MatchString(id) {
				c.id, what = id, fmt.Sprintf("client %q", id)
			} else {
				p.add(v.Line, "%s: clientId %q must be 1 to %d of A-Z a-z 0-9 . _ - @ :", what, id, maxClientIDLen)
			}
		}
	}
	if v := f["secretHash"]; v != nil {
		if s, ok := p.str(v, what+".secretHash"); ok {
			h, err := parsePHC(s)
			if err != nil {
				p.add(v.Line, "%s: secretHash: %v", what, err)
			}
			c.hash = h
		}
	}
	if v := f["services"]; v != nil {
		c.services = p.names(v, what, "service", knownService, "scoring or forecast")
	}
	if v := f["permissions"]; v != nil {
		c.permissions = p.names(v, what, "permission", p.perms.known, p.permList)
		for _, item := range v.Content {
			perm := item.Value
			if s := p.perms[perm]; s != "" && c.services != nil && !slices.Contains(c.services, s) {
				p.add(item.Line, "%s: permission %q needs service %q, which the client does not list", what, perm, s)
			}
		}
	}
	if v := f["limits"]; v != nil {
		c.limits = p.limits(v, what)
	}
	if v := f["programs"]; v != nil {
		c.programs = p.programs(v, what)
	}
	return c, len(p.list) == before
}

// limits reads a client's limits: a mapping of rate (a number > 0), burst and concurrency
// (whole numbers >= 1), each optional. A problem is reported at the line of its value.
func (p *problems) limits(n *yaml.Node, what string) Limits {
	var l Limits
	if n.Kind != yaml.MappingNode {
		p.add(n.Line, "%s: limits must be a mapping with the keys %s", what, strings.Join(limitKeys, ", "))
		return l
	}
	what += ": limits"
	f := p.fields(n, what, limitKeys...)
	if v := f["rate"]; v != nil {
		r, err := strconv.ParseFloat(v.Value, 64)
		switch {
		case v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") || err != nil:
			p.add(v.Line, "%s.rate must be a number of requests per second, got %s", what, quoteNode(v))
		case !(r > 0) || math.IsInf(r, 1):
			p.add(v.Line, "%s.rate must be more than 0 and finite, got %s", what, v.Value)
		default:
			l.Rate = r
		}
	}
	l.Burst = p.atLeastOne(f["burst"], what+".burst")
	l.Concurrency = p.atLeastOne(f["concurrency"], what+".concurrency")
	return l
}

// atLeastOne reads a whole number >= 1; 0 when n is nil or has a problem (reported).
func (p *problems) atLeastOne(n *yaml.Node, what string) int {
	if n == nil {
		return 0
	}
	v, err := strconv.ParseInt(n.Value, 10, 32)
	switch {
	case n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int":
		p.add(n.Line, "%s must be a whole number, got %s", what, quoteNode(n))
	case err != nil:
		p.add(n.Line, "%s must be a whole number from 1 to %d, got %s", what, math.MaxInt32, n.Value)
	case v < 1:
		p.add(n.Line, "%s must be at least 1, got %d", what, v)
	default:
		return int(v)
	}
	return 0
}

// quoteNode shows a value the way the file has it: a scalar quoted, anything else by its kind.
func quoteNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	default:
		return "an alias"
	}
}

// fields reports unknown and repeated keys of a mapping and returns the value node of each
// known key.
func (p *problems) fields(m *yaml.Node, what string, known ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	line := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			p.add(k.Line, "%s: keys must be plain names", what)
		case !slices.Contains(known, k.Value):
			p.add(k.Line, "%s: unknown key %q%s", what, k.Value, didYouMean(k.Value, known))
		case line[k.Value] != 0:
			p.add(k.Line, "%s: key %s is repeated (first at line %d)", what, k.Value, line[k.Value])
		default:
			out[k.Value], line[k.Value] = v, k.Line
		}
	}
	return out
}

func didYouMean(got string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(got, k) {
			return fmt.Sprintf(" (did you mean %s?)", k)
		}
	}
	return fmt.Sprintf(" (known: %s)", strings.Join(known, ", "))
}

// str reads a string scalar; numbers, nulls, lists and aliases are refused so that nothing is
// converted behind the operator's back.
func (p *problems) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		p.add(n.Line, "%s must be a string (quote it)", what)
		return "", false
	}
	return n.Value, true
}

// names reads a non-empty list of distinct known names (services or permissions).
func (p *problems) names(n *yaml.Node, what, kind string, known func(string) bool, want string) []string {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.add(n.Line, "%s: %ss must be a non-empty list", what, kind)
		return nil
	}
	var out []string
	for _, item := range n.Content {
		s, ok := p.str(item, fmt.Sprintf("%s: each %s", what, kind))
		switch {
		case !ok:
		case !known(s):
			p.add(item.Line, "%s: unknown %s %q (known: %s)", what, kind, s, want)
		case slices.Contains(out, s):
			p.add(item.Line, "%s: %s %q is repeated", what, kind, s)
		default:
			out = append(out, s)
		}
	}
	return out
}
