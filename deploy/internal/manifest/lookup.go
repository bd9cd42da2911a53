package manifest

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// describe names a document by kind and name for error messages, read leniently so that a
// document which fails strict decoding can still be named.
func describe(doc []byte) string {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil || head.Kind == "" {
		return "unreadable kind"
	}
	return head.Kind + " " + head.Metadata.Name
}

// Deployment is the Deployment called name, or nil.
func (s *Set) Deployment(name string) *appsv1.Deployment {
	for _, d := range s.Deployments {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// ConfigMap is the ConfigMap called name, or nil.
func (s *Set) ConfigMap(name string) *corev1.ConfigMap {
	for _, c := range s.ConfigMaps {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Secret is the Secret called name, or nil.
func (s *Set) Secret(name string) *corev1.Secret {
	for _, c := range s.Secrets {
		if c.Name == name {
			return c
		}
	}
	return nil
}
