package tie

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/yardstick-dev/yardstick/deploy/internal/manifest"
	"github.com/yardstick-dev/yardstick/internal/proc"
)

// portMap maps each declared container port to the loopback port standing in for it.
type portMap map[int32]int

// freePorts reserves a distinct free loopback port for every declared container port
// (internal/proc.FreePorts: all held until every one is chosen, so no two stand-ins coincide;
// should another process take one before the binary listens, the binary fails to listen — loudly,
// never silently).
func freePorts(c *corev1.Container) (portMap, error) {
	addrs, err := proc.FreePorts(len(c.Ports))
	if err != nil {
		return nil, fmt.Errorf("reserve loopback ports: %w", err)
	}
	pm := portMap{}
	for i, p := range c.Ports {
		_, port, _ := net.SplitHostPort(addrs[i])
		pm[p.ContainerPort], _ = strconv.Atoi(port)
	}
	return pm, nil
}

// remapAddr turns a declared listen address into the loopback address standing in for it.
func remapAddr(name, addr string, pm portMap) (string, error) {
	n, err := manifest.ListenPort(addr)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	local, ok := pm[n]
	if !ok {
		return "", fmt.Errorf("%s=%s listens on port %d, which the container does not declare", name, addr, n)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(local)), nil
}

// listenerFlag reports whether arg sets a listen-address flag, with the flag's name.
func listenerFlag(name string) (manifest.Listener, bool) {
	for _, l := range manifest.Listeners {
		if l.Flag == name {
			return l, true
		}
	}
	return manifest.Listener{}, false
}

func listenerEnv(name string) bool {
	for _, l := range manifest.Listeners {
		if l.Env == name {
			return true
		}
	}
	return false
}

// environment resolves the container's env as the kubelet would, then rewrites only what must
// change on the host: listen addresses onto loopback ports and absolute paths onto the host
// directories standing in for their mounts.
func environment(s *manifest.Set, op Operator, c *corev1.Container, pm portMap, mounts map[string]string) ([]string, error) {
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("envFrom is not reproduced; list env one by one")
	}
	var env []string
	for _, e := range c.Env {
		v, err := envValue(s, op, e)
		if err != nil {
			return nil, err
		}
		switch {
		case listenerEnv(e.Name):
			if v, err = remapAddr(e.Name, v, pm); err != nil {
				return nil, err
			}
		case strings.HasPrefix(v, "/"):
			v = hostPath(c, mounts, v)
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

func envValue(s *manifest.Set, op Operator, e corev1.EnvVar) (string, error) {
	if e.ValueFrom == nil {
		if strings.Contains(e.Value, "$(") {
			return "", fmt.Errorf("env %s: $(VAR) references are not reproduced", e.Name)
		}
		return e.Value, nil
	}
	var kind, name, key string
	switch r := e.ValueFrom; {
	case r.ConfigMapKeyRef != nil:
		kind, name, key = "ConfigMap", r.ConfigMapKeyRef.Name, r.ConfigMapKeyRef.Key
	case r.SecretKeyRef != nil:
		kind, name, key = "Secret", r.SecretKeyRef.Name, r.SecretKeyRef.Key
	default:
		return "", fmt.Errorf("env %s: only configMapKeyRef and secretKeyRef are reproduced", e.Name)
	}
	var files map[string][]byte
	switch {
	case kind == "ConfigMap" && s.ConfigMap(name) != nil:
		cm := s.ConfigMap(name)
		if v, ok := cm.Data[key]; ok {
			return v, nil
		}
	case kind == "Secret" && s.Secret(name) != nil:
		files = s.Secret(name).Data
	default:
		files = op[kind+"/"+name]
	}
	if v, ok := files[key]; ok {
		return string(v), nil
	}
	return "", fmt.Errorf("env %s: %s %s has no key %q", e.Name, kind, name, key)
}

// arguments rewrites the container's args like its env: listen-address flags onto loopback
// ports, absolute paths onto their mounts; everything else verbatim.
func arguments(c *corev1.Container, pm portMap, mounts map[string]string) ([]string, error) {
	out := make([]string, 0, len(c.Args))
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if strings.Contains(a, "$(") {
			return nil, fmt.Errorf("arg %q: $(VAR) references are not reproduced", a)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if l, ok := listenerFlag(name); ok && strings.HasPrefix(a, "-") {
			if !hasValue {
				if i+1 >= len(c.Args) {
					return nil, fmt.Errorf("flag %s has no value", a)
				}
				i++
				value = c.Args[i]
			}
			addr, err := remapAddr("-"+l.Flag, value, pm)
			if err != nil {
				return nil, err
			}
			out = append(out, "-"+l.Flag+"="+addr)
			continue
		}
		switch {
		case hasValue && strings.HasPrefix(a, "-") && strings.HasPrefix(value, "/"):
			out = append(out, a[:len(a)-len(value)]+hostPath(c, mounts, value))
		case strings.HasPrefix(a, "/"):
			out = append(out, hostPath(c, mounts, a))
		default:
			out = append(out, a)
		}
	}
	return out, nil
}
