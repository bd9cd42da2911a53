package yamledit

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          env:
            - name: A
              value: "1"
`

func TestMutateEditsOnlyTheNamedObject(t *testing.T) {
	t.Parallel()
	other := []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n")
	docs := [][]byte{[]byte(deployment), other}
	out, err := Mutate(docs, "Deployment", "web", func(o map[string]any) error {
		c, err := Container(o)
		if err != nil {
			return err
		}
		e, err := Named(c, "env", "A")
		if err != nil {
			return err
		}
		e["value"] = "2"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(out[1]) != string(other) {
		t.Errorf("the Service changed: got %q; want %q", out[1], other)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(out[0], &obj); err != nil {
		t.Fatal(err)
	}
	e, err := At(obj, "spec", "template", "spec", "containers", 0, "env", 0)
	if err != nil {
		t.Fatal(err)
	}
	if e["value"] != "2" {
		t.Errorf("env A = %v; want 2", e["value"])
	}
	if string(docs[0]) != deployment {
		t.Errorf("the input was modified")
	}
}

func TestErrorsNameWhatIsMissing(t *testing.T) {
	t.Parallel()
	docs := [][]byte{[]byte(deployment)}
	noop := func(map[string]any) error { return nil }
	if _, err := Mutate(docs, "Deployment", "api", noop); err == nil || !strings.Contains(err.Error(), "no Deployment api") {
		t.Errorf("Mutate of a missing object: got %v; want no Deployment api", err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(docs[0], &obj); err != nil {
		t.Fatal(err)
	}
	if _, err := At(obj, "spec", "template", "spec", "containers", 3); err == nil || !strings.Contains(err.Error(), "no element 3") {
		t.Errorf("At past the end: got %v; want no element 3", err)
	}
	c, err := Container(obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Named(c, "env", "B"); err == nil || !strings.Contains(err.Error(), "no env entry named B") {
		t.Errorf("Named of a missing entry: got %v; want no env entry named B", err)
	}
	if _, err := Named(c, "ports", "http"); err == nil || !strings.Contains(err.Error(), "ports is not a list") {
		t.Errorf("Named of a missing list: got %v; want ports is not a list", err)
	}
}
