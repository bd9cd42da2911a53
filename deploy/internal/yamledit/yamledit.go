// Package yamledit edits rendered Kubernetes YAML documents as generic maps, so that tests can
// plant one typo in a real manifest and check that the guard against it fires.
package yamledit

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// Mutate returns a copy of docs in which change has been applied to the object of the given kind
// and name; it fails when no such object exists or change fails.
func Mutate(docs [][]byte, kind, name string, change func(obj map[string]any) error) ([][]byte, error) {
	out := make([][]byte, len(docs))
	found := false
	for i, doc := range docs {
		out[i] = doc
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		if obj["kind"] != kind || meta["name"] != name {
			continue
		}
		if err := change(obj); err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, name, err)
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, name, err)
		}
		out[i], found = b, true
	}
	if !found {
		return nil, fmt.Errorf("no %s %s among the documents", kind, name)
	}
	return out, nil
}

// At walks obj along path — a string steps into a map, an int into a list — and returns the map
// it ends at.
func At(obj any, path ...any) (map[string]any, error) {
	cur := obj
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("path %v: not a map before %q", path, k)
			}
			cur = m[k]
		case int:
			l, ok := cur.([]any)
			if !ok || k < 0 || k >= len(l) {
				return nil, fmt.Errorf("path %v: no element %d", path, k)
			}
			cur = l[k]
		default:
			return nil, fmt.Errorf("path %v: step %v is neither a string nor an int", path, k)
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("path %v does not end at a map", path)
	}
	return m, nil
}

// Named finds the element of the list at obj[path...][list] whose "name" is name (env entries,
// ports, volumes, containers).
func Named(obj map[string]any, list, name string) (map[string]any, error) {
	items, ok := obj[list].([]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a list", list)
	}
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m["name"] == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no %s entry named %s", list, name)
}

// Container is the first container of a Deployment.
func Container(deployment map[string]any) (map[string]any, error) {
	return At(deployment, "spec", "template", "spec", "containers", 0)
}
