package tie

import (
	"context"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/deploy/internal/manifest"
	"github.com/yardstick-dev/yardstick/deploy/internal/yamledit"
)

// edit is a typo planted in one object of a rendered overlay.
type edit func(obj map[string]any) error

func inContainer(change func(c map[string]any) error) edit {
	return func(obj map[string]any) error {
		c, err := yamledit.Container(obj)
		if err != nil {
			return err
		}
		return change(c)
	}
}

func setEnv(name, field string, value any) edit {
	return inContainer(func(c map[string]any) error {
		e, err := yamledit.Named(c, "env", name)
		if err != nil {
			return err
		}
		e[field] = value
		return nil
	})
}

func setAt(value any, key string, path ...any) edit {
	return func(obj map[string]any) error {
		m, err := yamledit.At(obj, path...)
		if err != nil {
			return err
		}
		m[key] = value
		return nil
	}
}

var containerPath = []any{"spec", "template", "spec", "containers", 0}

func inProbe(probe string, rest ...any) []any {
	return append(append(append([]any{}, containerPath...), probe), rest...)
}

// TestTieCheckFailsOnTheTypoItGuardsAgainst plants one typo per case in a rendered overlay and
// runs the tie check alone (no policy), wanting it to fail and name the cause. Several of these
// typos pass strict decoding and the policy: only running the binary finds them.
func TestTieCheckFailsOnTheTypoItGuardsAgainst(t *testing.T) {
	t.Parallel()
	overlays := map[string]overlay{"dev": loadOverlay(t, "dev"), "prod": loadOverlay(t, "prod")}
	clientsSecret := func(o overlay) string {
		for _, s := range o.set.Secrets {
			if strings.HasPrefix(s.Name, "yardstick-clients") {
				return s.Name
			}
		}
		t.Fatal("dev renders no clients Secret")
		return ""
	}
	tests := []struct {
		name       string
		overlay    string
		kind, obj  string
		change     edit
		deployment string
		want       string
	}{
		{"misspelt env name", "dev", "Deployment", "scoring",
			setEnv("YARDSTICK_LOG_LEVEL", "name", "YARDSTICK_LOG_LEVLE"), "scoring", "YARDSTICK_LOG_LEVLE"},
		{"misspelt env value", "prod", "Deployment", "forecast",
			setEnv("YARDSTICK_LOG_FORMAT", "value", "jsno"), "forecast", "YARDSTICK_LOG_FORMAT"},
		{"misspelt duration", "prod", "Deployment", "scoring",
			setEnv("YARDSTICK_RELOAD_INTERVAL", "value", "30"), "scoring", "YARDSTICK_RELOAD_INTERVAL"},
		{"listen address on an undeclared port", "dev", "Deployment", "forecast",
			setEnv("YARDSTICK_GRPC_ADDR", "value", ":9090"), "forecast", "listens on port 9090, which the container does not declare"},
		{"liveness probe on a misspelt path", "dev", "Deployment", "forecast",
			setAt("/heathz", "path", inProbe("livenessProbe", "httpGet")...), "forecast", "livenessProbe: httpGet /heathz port http: got HTTP 404"},
		// (Was a trailing slash, "/healthz/": the binaries now serve a documented path with a
		// trailing slash as the path itself, so that is no longer a typo.)
		{"startup probe on a path in the wrong case", "prod", "Deployment", "scoring",
			setAt("/Healthz", "path", inProbe("startupProbe", "httpGet")...), "scoring", "got HTTP 404"},
		{"gRPC probe on an unknown health service", "prod", "Deployment", "forecast",
			setAt("yardstick.forecast", "service", inProbe("readinessProbe", "grpc")...), "forecast", "NotFound"},
		{"gRPC probe on the other service's port", "dev", "Deployment", "scoring",
			setAt(9091, "port", inProbe("readinessProbe", "grpc")...), "scoring", "port 9091 is not a declared port"},
		{"HTTP probe on the gRPC port", "prod", "Deployment", "scoring",
			setAt("grpc", "port", inProbe("livenessProbe", "httpGet")...), "scoring", "livenessProbe: 3 consecutive failures, the last: httpGet /healthz port grpc"},
		{"content mounted at a misspelt path", "dev", "Deployment", "scoring",
			setAt("/etc/yardstick/contents", "mountPath", append(append([]any{}, containerPath...), "volumeMounts", 0)...), "scoring", "load content bundle /etc/yardstick/content"},
		{"clients file under a misspelt key", "dev", "Secret", "",
			func(obj map[string]any) error {
				data, err := yamledit.At(obj, "data")
				if err != nil {
					return err
				}
				data["clients.yml"] = data["clients.yaml"]
				delete(data, "clients.yaml")
				return nil
			}, "forecast", "clients.yaml: no such file or directory"},
		{"grace period shorter than the drain", "prod", "Deployment", "forecast",
			setAt(2, "terminationGracePeriodSeconds", "spec", "template", "spec"), "forecast", "still running terminationGracePeriodSeconds (2s) after SIGTERM"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := overlays[tc.overlay]
			obj := tc.obj
			if tc.kind == "Secret" {
				obj = clientsSecret(o)
			}
			docs, err := yamledit.Mutate(o.docs, tc.kind, obj, tc.change)
			if err != nil {
				t.Fatal(err)
			}
			s, err := manifest.Decode(docs)
			if err != nil {
				t.Fatalf("Decode: %v; want the typo to decode and fail only when run", err)
			}
			err = Check(context.Background(), s, tc.deployment, Options{Binary: binaries[tc.deployment], Operator: o.op})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check error: got %v; want one containing %q", err, tc.want)
			}
			t.Logf("fails as it should: %.300s", err)
		})
	}
}
