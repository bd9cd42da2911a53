package manifest

import (
	"path"
	"regexp"
	"strings"
)

// Created is a ConfigMap or Secret that deploy/README.md tells the operator to create with
// kubectl before applying the prod overlay.
type Created struct {
	Kind      string // ConfigMap or Secret
	Name      string
	Namespace string
	// Keys are the file names the object will hold where the command fixes them
	// (--from-file=key=path or --from-file=file); a directory source adds no key.
	Keys []string
	// FromDir reports a --from-file source that is a directory (its files become keys).
	FromDir bool
}

var createCommand = regexp.MustCompile(`kubectl\s+(?:-n|--namespace)[\s=](\S+)\s+create\s+(configmap|secret\s+generic)\s+(\S+)((?:\s+--from-file=\S+)+)`)

// OperatorCreated lists the kubectl create configmap / secret generic commands of a README, so
// that a test can hold the manifests to the documented objects (name, namespace and file keys).
func OperatorCreated(readme []byte) []Created {
	var out []Created
	text := strings.ReplaceAll(string(readme), "\\\n", " ")
	for _, m := range createCommand.FindAllStringSubmatch(text, -1) {
		c := Created{Namespace: m[1], Name: m[3], Kind: "ConfigMap"}
		if strings.HasPrefix(m[2], "secret") {
			c.Kind = "Secret"
		}
		for _, f := range strings.Fields(m[4]) {
			src := strings.TrimPrefix(f, "--from-file=")
			if key, _, ok := strings.Cut(src, "="); ok {
				c.Keys = append(c.Keys, key)
				continue
			}
			if strings.HasSuffix(src, "/") {
				c.FromDir = true
				continue
			}
			c.Keys = append(c.Keys, path.Base(src))
		}
		out = append(out, c)
	}
	return out
}
