package manifest

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestFlagValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args  []string
		value string
		found bool
	}{
		{[]string{"-http-addr=:1"}, ":1", true},
		{[]string{"--http-addr", ":2"}, ":2", true},
		{[]string{"-http-addr=:1", "-http-addr", ":3"}, ":3", true}, // the last one wins
		{[]string{"-http-addrx=:1"}, "", false},
		{[]string{"-grpc-addr=:1"}, "", false},
		{[]string{"-http-addr"}, "", false}, // no value follows
		{nil, "", false},
	}
	for _, tc := range tests {
		got, found := FlagValue(tc.args, "http-addr")
		if got != tc.value || found != tc.found {
			t.Errorf("FlagValue(%q) = %q, %v; want %q, %v", tc.args, got, found, tc.value, tc.found)
		}
	}
}

func TestSettingPrefersTheFlag(t *testing.T) {
	t.Parallel()
	c := &corev1.Container{
		Args: []string{"-grpc-addr=:7"},
		Env: []corev1.EnvVar{
			{Name: "YARDSTICK_GRPC_ADDR", Value: ":9"},
			{Name: "YARDSTICK_HTTP_ADDR", Value: ":8"},
			{Name: "YARDSTICK_KEYS_DIR", ValueFrom: &corev1.EnvVarSource{}},
		},
	}
	for _, tc := range []struct {
		env, flag, want string
		ok, err         bool
	}{
		{"YARDSTICK_GRPC_ADDR", "grpc-addr", ":7", true, false},
		{"YARDSTICK_HTTP_ADDR", "http-addr", ":8", true, false},
		{"YARDSTICK_LOG_LEVEL", "log-level", "", false, false},
		{"YARDSTICK_KEYS_DIR", "keys-dir", "", true, true},
	} {
		got, ok, err := Setting(c, tc.env, tc.flag)
		if got != tc.want || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("Setting(%s) = %q, %v, %v; want %q, %v, error %v", tc.env, got, ok, err, tc.want, tc.ok, tc.err)
		}
	}
}

func TestListenPort(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]int32{":8080": 8080, "0.0.0.0:9090": 9090, "[::]:1": 1} {
		if got, err := ListenPort(addr); err != nil || got != want {
			t.Errorf("ListenPort(%q) = %d, %v; want %d", addr, got, err, want)
		}
	}
	for _, addr := range []string{"8080", ":http", ":0", ":70000", ""} {
		if _, err := ListenPort(addr); err == nil {
			t.Errorf("ListenPort(%q): got no error; want one", addr)
		}
	}
}

func TestShutdownBudget(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) *corev1.Container {
		c := &corev1.Container{}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Env = append(c.Env, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
		return c
	}
	tests := []struct {
		c    *corev1.Container
		want time.Duration
		err  string
	}{
		{env(), DefaultShutdownDelay + DefaultShutdownGrace, ""},
		{env(EnvShutdownDelay, "5s", EnvShutdownGrace, "20s"), 25 * time.Second, ""},
		{&corev1.Container{Args: []string{"-shutdown-grace=1m"}}, time.Minute, ""},
		{env(EnvShutdownGrace, "20"), 0, EnvShutdownGrace},
	}
	for _, tc := range tests {
		got, err := ShutdownBudget(tc.c)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ShutdownBudget(%+v): got %v; want an error naming %s", tc.c, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ShutdownBudget(%+v) = %s, %v; want %s", tc.c, got, err, tc.want)
		}
	}
}

func TestMountForTakesTheLongestMountPath(t *testing.T) {
	t.Parallel()
	c := &corev1.Container{VolumeMounts: []corev1.VolumeMount{
		{Name: "etc", MountPath: "/etc/yardstick"},
		{Name: "keys", MountPath: "/etc/yardstick/keys/"},
	}}
	tests := []struct {
		path, mount, rest string
		ok                bool
	}{
		{"/etc/yardstick/keys/a.pem", "keys", "a.pem", true},
		{"/etc/yardstick/keys", "keys", "", true},
		{"/etc/yardstick/keysx", "etc", "keysx", true},
		{"/etc/yardstick/clients/c.yaml", "etc", "clients/c.yaml", true},
		{"/etc/other", "", "", false},
	}
	for _, tc := range tests {
		m, rest, ok := MountFor(c, tc.path)
		name := ""
		if m != nil {
			name = m.Name
		}
		if name != tc.mount || rest != tc.rest || ok != tc.ok {
			t.Errorf("MountFor(%s) = %q, %q, %v; want %q, %q, %v", tc.path, name, rest, ok, tc.mount, tc.rest, tc.ok)
		}
	}
}
