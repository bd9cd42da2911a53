package manifest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
)

// KubernetesVersion is the cluster version kube-score checks the manifests against: the oldest
// Kubernetes minor release maintained upstream when it was last raised (November 2026). The
// manifests themselves need 1.27 or later (native gRPC probes).
const KubernetesVersion = "v1.35"

// KubeScoreArgs are the arguments KubeScore gives the kube-score binary (pinned in tools/go.mod,
// built into bin/tools by make tools), the rendered overlay following on stdin. Every autoscaler
// keeps at least two replicas (one pod is one node drain away from an outage). A WARNING fails as a
// CRITICAL does: a check that does not fit an object is silenced on that object with kube-score's
// kube-score/ignore annotation, next to a comment saying why.
var KubeScoreArgs = []string{"score", "--kubernetes-version", KubernetesVersion, "--min-replicas-hpa", "2",
	"--exit-one-on-warning", "--output-format", "json", "-"}

// kube-score's grades (scorecard.Grade): at or below warning fails.
const kubeScoreWarning = 5

// kubeScoreObject is the part of one object of kube-score's JSON output (format v2) that KubeScore
// reports.
type kubeScoreObject struct {
	TypeMeta struct {
		Kind string `json:"kind"`
	} `json:"type_meta"`
	ObjectMeta struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"object_meta"`
	Checks []struct {
		Check struct {
			ID string `json:"id"`
		} `json:"check"`
		Grade    int                `json:"grade"`
		Skipped  bool               `json:"skipped"`
		Comments []kubeScoreComment `json:"comments"`
	} `json:"checks"`
}

type kubeScoreComment struct {
	Path        string `json:"path"`
	Summary     string `json:"summary"`
	Description string `json:"description"`
}

// KubeScore runs the kube-score binary at bin on a rendered overlay and reports every CRITICAL or
// WARNING finding, each as "Kind namespace/name: check-id: (path) summary: description".
func KubeScore(ctx context.Context, bin string, docs [][]byte) error {
	cmd := exec.CommandContext(ctx, bin, KubeScoreArgs...)
	cmd.Stdin = bytes.NewReader(bytes.Join(docs, []byte("---\n")))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var objects []kubeScoreObject
	if err := json.Unmarshal(stdout.Bytes(), &objects); err != nil {
		return fmt.Errorf("kube-score: %v; output unreadable: %w: %s", runErr, err, stderr.Bytes())
	}
	var findings []error
	for _, o := range objects {
		for _, c := range o.Checks {
			if c.Skipped || c.Grade > kubeScoreWarning {
				continue
			}
			if len(c.Comments) == 0 {
				c.Comments = []kubeScoreComment{{Summary: "failed"}}
			}
			for _, m := range c.Comments {
				msg := fmt.Sprintf("%s %s/%s: %s: ", o.TypeMeta.Kind, o.ObjectMeta.Namespace, o.ObjectMeta.Name, c.Check.ID)
				if m.Path != "" {
					msg += "(" + m.Path + ") "
				}
				msg += m.Summary
				if m.Description != "" {
					msg += ": " + m.Description
				}
				findings = append(findings, errors.New(msg))
			}
		}
	}
	if runErr != nil && len(findings) == 0 {
		return fmt.Errorf("kube-score: %w: %s", runErr, stderr.Bytes())
	}
	return errors.Join(findings...)
}
