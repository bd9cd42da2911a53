package manifest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKubeScoreReportsARunThatGivesNoVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bin  string
		docs [][]byte
		want string
	}{
		{"no such binary", filepath.Join(t.TempDir(), "kube-score"), nil, "no such file"},
		{"unparsable input", kubeScore, [][]byte{[]byte("kind: [")}, "failed to parse files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := KubeScore(context.Background(), tc.bin, tc.docs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("KubeScore: got %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestSilencedReadsBothAnnotationPlaces(t *testing.T) {
	t.Parallel()
	deployment := func(onDeployment, onTemplate string) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		if onDeployment != "" {
			d.Annotations = map[string]string{"kube-score/ignore": onDeployment}
		}
		if onTemplate != "" {
			d.Spec.Template.ObjectMeta = metav1.ObjectMeta{Annotations: map[string]string{"kube-score/ignore": onTemplate}}
		}
		return d
	}
	tests := []struct {
		name                     string
		onDeployment, onTemplate string
		want                     bool
	}{
		{"on the pod template", "", "container-image-pull-policy", true},
		{"on the Deployment, in a list", "deployment-has-host-podantiaffinity, container-image-pull-policy", "", true},
		{"another check only", "deployment-has-host-podantiaffinity", "container-resources", false},
		{"a longer id", "container-image-pull-policy-x", "", false},
		{"no annotation", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := silenced(deployment(tc.onDeployment, tc.onTemplate), "container-image-pull-policy"); got != tc.want {
				t.Errorf("silenced = %v; want %v", got, tc.want)
			}
		})
	}
}
