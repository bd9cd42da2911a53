package manifest

import (
	"fmt"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Render builds the kustomization in dir with kustomize's default options (files only from inside
// the kustomization root, built-in generators and transformers only) and returns one YAML document
// per rendered object, in kustomize's output order.
func Render(dir string) ([][]byte, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", dir, err)
	}
	var docs [][]byte
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("render %s: %s: %w", dir, r.CurId(), err)
		}
		docs = append(docs, y)
	}
	return docs, nil
}
