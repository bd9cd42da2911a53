package manifest

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Listener ties a listen-address setting of the Yardstick binaries (an environment variable and
// the flag that mirrors it) to the name of the container port that must carry it.
type Listener struct {
	Env      string
	Flag     string
	PortName string
	// Service: callers reach the port through the Service; the probe port is the kubelet's alone.
	Service bool
}

// Listeners are the binaries' listen addresses. A manifest must set each explicitly: the
// binaries' defaults differ per service (the probe listener is off by default), and the tie check
// can only remap ports it can see.
var Listeners = []Listener{
	{Env: "YARDSTICK_HTTP_ADDR", Flag: "http-addr", PortName: "http", Service: true},
	{Env: "YARDSTICK_GRPC_ADDR", Flag: "grpc-addr", PortName: "grpc", Service: true},
	{Env: "YARDSTICK_PROBE_ADDR", Flag: "probe-addr", PortName: "probe"},
}

// Shutdown settings of the binaries and their defaults: after SIGTERM, readiness reports draining
// for the delay, then in-flight requests get up to the grace to finish.
const (
	EnvShutdownDelay     = "YARDSTICK_SHUTDOWN_DELAY"
	EnvShutdownGrace     = "YARDSTICK_SHUTDOWN_GRACE"
	FlagShutdownDelay    = "shutdown-delay"
	FlagShutdownGrace    = "shutdown-grace"
	DefaultShutdownDelay = 0 * time.Second
	DefaultShutdownGrace = 20 * time.Second
)

// Setting is the literal value a container gives a setting: its flag in args wins over its
// environment variable, as in the binaries. ok is false when neither is set; an error means the
// value is set but not literally (valueFrom), so it cannot be checked offline.
func Setting(c *corev1.Container, env, flag string) (value string, ok bool, err error) {
	if v, found := FlagValue(c.Args, flag); found {
		return v, true, nil
	}
	for i := len(c.Env) - 1; i >= 0; i-- {
		e := c.Env[i]
		if e.Name != env {
			continue
		}
		if e.ValueFrom != nil {
			return "", true, fmt.Errorf("%s is set with valueFrom; it must be a literal value", env)
		}
		return e.Value, true, nil
	}
	return "", false, nil
}

// FlagValue finds -name=v, --name=v, -name v or --name v in args, the last one winning as in the
// flag package.
func FlagValue(args []string, name string) (string, bool) {
	var v string
	found := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		for _, dash := range []string{"--", "-"} {
			rest, ok := strings.CutPrefix(a, dash+name)
			if !ok {
				continue
			}
			switch {
			case strings.HasPrefix(rest, "="):
				v, found = rest[1:], true
			case rest == "" && i+1 < len(args):
				v, found = args[i+1], true
				i++
			}
			break
		}
	}
	return v, found
}

// ListenPort is the port number of a listen address such as ":8080" or "0.0.0.0:8080".
func ListenPort(addr string) (int32, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("%q is not host:port: %w", addr, err)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q: port %q is not a number from 1 to 65535", addr, port)
	}
	return int32(n), nil
}

// ContainerPort resolves a probe or Service target port — a name or a number — to the container
// port it designates. A number must be declared too: the tie check remaps declared ports only, and
// an undeclared number is almost always a typo.
func ContainerPort(c *corev1.Container, port intstr.IntOrString) (*corev1.ContainerPort, error) {
	for i := range c.Ports {
		p := &c.Ports[i]
		if port.Type == intstr.String && p.Name == port.StrVal {
			return p, nil
		}
		if port.Type == intstr.Int && p.ContainerPort == port.IntVal {
			return p, nil
		}
	}
	return nil, fmt.Errorf("port %s is not a declared port of container %s", port.String(), c.Name)
}

// ShutdownBudget is the longest a binary configured as c may take to exit after SIGTERM:
// YARDSTICK_SHUTDOWN_DELAY plus YARDSTICK_SHUTDOWN_GRACE, each defaulted when unset.
func ShutdownBudget(c *corev1.Container) (time.Duration, error) {
	var total time.Duration
	for _, s := range []struct {
		env, flag string
		def       time.Duration
	}{
		{EnvShutdownDelay, FlagShutdownDelay, DefaultShutdownDelay},
		{EnvShutdownGrace, FlagShutdownGrace, DefaultShutdownGrace},
	} {
		v, ok, err := Setting(c, s.env, s.flag)
		if err != nil {
			return 0, err
		}
		d := s.def
		if ok {
			if d, err = time.ParseDuration(v); err != nil {
				return 0, fmt.Errorf("%s: %w", s.env, err)
			}
		}
		total += d
	}
	return total, nil
}
