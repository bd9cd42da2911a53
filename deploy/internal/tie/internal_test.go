package tie

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/yardstick-dev/yardstick/deploy/internal/manifest"
)

func TestArgumentsRewriteOnlyListenersAndMountedPaths(t *testing.T) {
	t.Parallel()
	c := &corev1.Container{
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "grpc", ContainerPort: 9090}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "content", MountPath: "/etc/yardstick/content"},
		},
		Args: []string{"-http-addr", ":8080", "--grpc-addr=0.0.0.0:9090", "-content-dir=/etc/yardstick/content",
			"/etc/yardstick/content/items.csv", "-log-level", "debug", "/var/elsewhere"},
	}
	pm := portMap{8080: 41000, 9090: 41001}
	mounts := map[string]string{"/etc/yardstick/content": "/tmp/x/content"}
	got, err := arguments(c, pm, mounts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-http-addr=127.0.0.1:41000", "-grpc-addr=127.0.0.1:41001", "-content-dir=/tmp/x/content",
		"/tmp/x/content/items.csv", "-log-level", "debug", "/var/elsewhere"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
	for _, bad := range [][]string{{"-grpc-addr=:9091"}, {"-http-addr"}, {"-http-addr=8080"}, {"$(HOME)"}} {
		c.Args = bad
		if _, err := arguments(c, pm, mounts); err == nil {
			t.Errorf("arguments(%q): got no error; want one", bad)
		}
	}
}

func TestEnvironmentResolvesReferencesAndRefusesWhatItCannotReproduce(t *testing.T) {
	t.Parallel()
	s := &manifest.Set{ConfigMaps: []*corev1.ConfigMap{{
		ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"level": "debug"},
	}}}
	op := Operator{"Secret/sec": {"ttl": []byte("1h")}}
	ref := func(kind, name, key string) *corev1.EnvVarSource {
		sel := corev1.LocalObjectReference{Name: name}
		if kind == "ConfigMap" {
			return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: sel, Key: key}}
		}
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: sel, Key: key}}
	}
	c := &corev1.Container{
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		Env: []corev1.EnvVar{
			{Name: "YARDSTICK_HTTP_ADDR", Value: ":8080"},
			{Name: "YARDSTICK_LOG_LEVEL", ValueFrom: ref("ConfigMap", "cm", "level")},
			{Name: "YARDSTICK_TOKEN_TTL", ValueFrom: ref("Secret", "sec", "ttl")},
			{Name: "YARDSTICK_KEYS_DIR", Value: "/etc/yardstick/keys"},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "keys", MountPath: "/etc/yardstick/keys"}},
	}
	got, err := environment(s, op, c, portMap{8080: 41000}, map[string]string{"/etc/yardstick/keys": "/tmp/k"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"YARDSTICK_HTTP_ADDR=127.0.0.1:41000", "YARDSTICK_LOG_LEVEL=debug", "YARDSTICK_TOKEN_TTL=1h", "YARDSTICK_KEYS_DIR=/tmp/k"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
	for name, e := range map[string]corev1.EnvVar{
		"field ref":       {Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		"missing key":     {Name: "X", ValueFrom: ref("ConfigMap", "cm", "nope")},
		"missing secret":  {Name: "X", ValueFrom: ref("Secret", "other", "ttl")},
		"$(VAR)":          {Name: "X", Value: "$(YARDSTICK_HTTP_ADDR)"},
		"undeclared port": {Name: "YARDSTICK_HTTP_ADDR", Value: ":8081"},
	} {
		bad := &corev1.Container{Ports: c.Ports, Env: []corev1.EnvVar{e}}
		if _, err := environment(s, op, bad, portMap{8080: 41000}, nil); err == nil {
			t.Errorf("%s: got no error; want one", name)
		}
	}
	if _, err := environment(s, op, &corev1.Container{EnvFrom: []corev1.EnvFromSource{{}}}, nil, nil); err == nil {
		t.Errorf("envFrom: got no error; want one")
	}
}

func TestWriteVolumeLaysFilesOutLikeTheKubelet(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "vol")
	if err := writeVolume(dir, map[string][]byte{"a.csv": []byte("a"), "sub/b.pem": []byte("b")}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"..2026_01_01_00_00_00.000000001", "..data", "a.csv", "sub"}) {
		t.Errorf("entries %q; want the timestamped dir, ..data and the two top-level names", names)
	}
	for name, want := range map[string]string{"a.csv": "a", "sub/b.pem": "b"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "a.csv")); err != nil || target != filepath.Join("..data", "a.csv") {
		t.Errorf("a.csv links to %q, %v; want ..data/a.csv", target, err)
	}
	if err := writeVolume(filepath.Join(t.TempDir(), "v"), map[string][]byte{"../escape": nil}); err == nil {
		t.Errorf("a file name climbing out of the volume: got no error; want one")
	}
}

func TestSourceFilesProjectsItems(t *testing.T) {
	t.Parallel()
	s := &manifest.Set{Secrets: []*corev1.Secret{{
		ObjectMeta: metav1.ObjectMeta{Name: "sec"}, Data: map[string][]byte{"k": []byte("v"), "other": []byte("o")},
	}}}
	v := &corev1.Volume{Name: "x", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: "sec", Items: []corev1.KeyToPath{{Key: "k", Path: "dir/file"}},
	}}}
	got, err := sourceFiles(s, nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got["dir/file"]) != "v" {
		t.Errorf("got %q; want only dir/file = v", got)
	}
	v.Secret.Items[0].Key = "missing"
	if _, err := sourceFiles(s, nil, v); err == nil || !strings.Contains(err.Error(), `item key "missing"`) {
		t.Errorf("projecting a missing key: got %v; want an error naming it", err)
	}
	v.Secret.SecretName = "absent"
	if _, err := sourceFiles(s, nil, v); err == nil || !strings.Contains(err.Error(), "neither rendered nor supplied") {
		t.Errorf("an absent Secret: got %v; want neither rendered nor supplied", err)
	}
}

// shellDeployment is a Deployment whose "binary" is /bin/sh running script, to test Stop's
// verdicts without a service binary.
func shellDeployment(script string, graceSeconds int64) *manifest.Set {
	return &manifest.Set{Deployments: []*appsv1.Deployment{{
		ObjectMeta: metav1.ObjectMeta{Name: "sh"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &graceSeconds,
			Containers: []corev1.Container{{
				Name: "sh",
				Args: []string{"-c", script},
				Env:  []corev1.EnvVar{{Name: "PATH", Value: "/usr/bin:/bin"}},
			}},
		}}},
	}}}
}

func exited(in *Instance) bool {
	select {
	case <-in.p.Exited():
		return true
	default:
		return false
	}
}

func TestStopJudgesTheExitAsTheKubeletWould(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		want   string
	}{
		{"clean exit on SIGTERM", "trap 'exit 0' TERM; echo up; while :; do sleep 0.05; done", ""},
		{"non-zero exit on SIGTERM", "trap 'exit 3' TERM; echo up; while :; do sleep 0.05; done", "exited with exit status 3"},
		{"SIGTERM ignored past the grace period", "trap '' TERM; echo up; while :; do sleep 0.05; done", "the kubelet would SIGKILL it"},
		{"exit before SIGTERM", "exit 0", "had already exited"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, err := Start(shellDeployment(tc.script, 1), "sh", Options{Binary: "/bin/sh"})
			if err != nil {
				t.Fatal(err)
			}
			// Stop only once the shell has installed its trap (it prints "up" after), or has exited.
			for !strings.Contains(in.Output(), "up") && !exited(in) {
				time.Sleep(10 * time.Millisecond)
			}
			err = in.Stop()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Stop: %v; want a clean exit", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Stop: got %v; want an error containing %q", err, tc.want)
			}
		})
	}
}
