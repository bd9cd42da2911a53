package tie

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/yardstick-dev/yardstick/deploy/internal/manifest"
	"github.com/yardstick-dev/yardstick/internal/proc"
)

// Options configure one run of a Deployment's binary.
type Options struct {
	// Binary is the service binary the container's image holds.
	Binary string
	// Operator supplies the ConfigMaps and Secrets the manifests reference but do not render.
	Operator Operator
	// Log, when set, receives the binary's output as it runs.
	Log io.Writer
}

// Instance is one running binary standing in for a pod of a Deployment.
type Instance struct {
	Deployment string
	c          *corev1.Container
	ports      portMap
	grace      time.Duration
	root       string
	p          *proc.Proc
	out        *tail
	stopOnce   sync.Once
	stopErr    error
}

// Check runs the whole tie check for one Deployment: start, wait for readiness, pass every
// declared probe, stop cleanly on SIGTERM.
func Check(ctx context.Context, s *manifest.Set, deployment string, opts Options) error {
	in, err := Start(s, deployment, opts)
	if err != nil {
		return err
	}
	if err := in.WaitReady(ctx); err != nil {
		in.Close()
		return err
	}
	if err := in.ProbeAll(ctx); err != nil {
		in.Close()
		return err
	}
	return in.Stop()
}

// Start launches the binary as the Deployment's container would run.
func Start(s *manifest.Set, deployment string, opts Options) (*Instance, error) {
	d := s.Deployment(deployment)
	if d == nil {
		return nil, fmt.Errorf("tie %s: no such Deployment", deployment)
	}
	pod := &d.Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.InitContainers) > 0 {
		return nil, fmt.Errorf("tie %s: only pods of exactly one container are reproduced", deployment)
	}
	c := &pod.Containers[0]
	if len(c.Command) > 0 {
		return nil, fmt.Errorf("tie %s: command %v replaces the image's binary; it is not reproduced", deployment, c.Command)
	}
	in := &Instance{Deployment: deployment, c: c, grace: 30 * time.Second, out: &tail{}}
	if pod.TerminationGracePeriodSeconds != nil {
		in.grace = time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	}
	if err := in.launch(s, pod, opts); err != nil {
		in.cleanup()
		return nil, fmt.Errorf("tie %s: %w", deployment, err)
	}
	return in, nil
}

func (in *Instance) launch(s *manifest.Set, pod *corev1.PodSpec, opts Options) error {
	root, err := os.MkdirTemp("", "tie-"+in.Deployment+"-")
	if err != nil {
		return err
	}
	in.root = root
	mounts, err := mountVolumes(root, s, opts.Operator, pod, in.c)
	if err != nil {
		return err
	}
	if in.ports, err = freePorts(in.c); err != nil {
		return err
	}
	env, err := environment(s, opts.Operator, in.c, in.ports, mounts)
	if err != nil {
		return err
	}
	args, err := arguments(in.c, in.ports, mounts)
	if err != nil {
		return err
	}
	var w io.Writer = in.out
	if opts.Log != nil {
		w = io.MultiWriter(in.out, opts.Log)
	}
	// The environment is exactly the manifest's: nothing of the test's leaks in.
	in.p, err = proc.Start(opts.Binary, args, proc.Options{Env: env, Dir: root, Output: w})
	return err
}

// startBudget is how long the kubelet would wait for the container to come up: the longest of
// the declared probes' initialDelaySeconds + periodSeconds * failureThreshold.
func startBudget(c *corev1.Container) time.Duration {
	var budget time.Duration
	for _, p := range manifest.Probes(c) {
		period, failures := p.Probe.PeriodSeconds, p.Probe.FailureThreshold
		if period <= 0 {
			period = 10
		}
		if failures <= 0 {
			failures = 3
		}
		if b := time.Duration(p.Probe.InitialDelaySeconds+period*failures) * time.Second; b > budget {
			budget = b
		}
	}
	return budget
}

// WaitReady polls the readiness probe until it passes, fails in a way waiting cannot cure, the
// binary exits, or the manifest's own start-up budget runs out.
func (in *Instance) WaitReady(ctx context.Context) error {
	probe := in.c.ReadinessProbe
	if probe == nil {
		return fmt.Errorf("tie %s: no readinessProbe to wait for", in.Deployment)
	}
	ctx, cancel := context.WithTimeout(ctx, startBudget(in.c))
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = runProbe(ctx, in.c, in.ports, probe); last == nil {
			return nil
		}
		if errors.Is(last, errPermanent) {
			return fmt.Errorf("tie %s: readinessProbe: %w; output:\n%s", in.Deployment, last, in.out)
		}
		select {
		case <-in.p.Exited():
			return fmt.Errorf("tie %s: the binary exited before it was ready (%v); its output:\n%s", in.Deployment, in.p.ExitErr(), in.out)
		case <-ctx.Done():
			return fmt.Errorf("tie %s: readinessProbe never passed within the manifest's start-up budget (%s): %v; output:\n%s",
				in.Deployment, startBudget(in.c), last, in.out)
		case <-tick.C:
		}
	}
}

// ProbeAll runs every declared probe as the kubelet judges it: a probe fails only after
// failureThreshold consecutive failures (a failure waiting cannot cure fails at once). Attempts
// are 100 ms apart rather than periodSeconds, to keep the check quick.
func (in *Instance) ProbeAll(ctx context.Context) error {
	var errs []error
	for _, p := range manifest.Probes(in.c) {
		if err := in.probeUntilThreshold(ctx, p.Probe); err != nil {
			errs = append(errs, fmt.Errorf("tie %s: %s: %w", in.Deployment, p.Kind, err))
		}
	}
	if len(errs) > 0 {
		errs = append(errs, fmt.Errorf("output of the binary:\n%s", in.out))
	}
	return errors.Join(errs...)
}

func (in *Instance) probeUntilThreshold(ctx context.Context, p *corev1.Probe) error {
	attempts := int(p.FailureThreshold)
	if attempts <= 0 {
		attempts = 3 // the kubelet's default
	}
	var err error
	for i := range attempts {
		if err = runProbe(ctx, in.c, in.ports, p); err == nil || errors.Is(err, errPermanent) {
			return err
		}
		if i+1 < attempts {
			select {
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return fmt.Errorf("%d consecutive failures, the last: %w", attempts, err)
}

// URL is the loopback base URL (http://127.0.0.1:N) standing in for the container port called
// name.
func (in *Instance) URL(name string) (string, error) {
	for _, p := range in.c.Ports {
		if p.Name == name {
			return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(in.ports[p.ContainerPort])), nil
		}
	}
	return "", fmt.Errorf("tie %s: no port named %s", in.Deployment, name)
}

// Output is the tail of what the binary has written so far.
func (in *Instance) Output() string { return in.out.String() }

// Stop sends SIGTERM and wants the binary to exit with status 0 within the pod's termination
// grace period, as the kubelet allows before SIGKILL. It is safe to call more than once.
func (in *Instance) Stop() error {
	in.stopOnce.Do(func() {
		defer in.cleanup()
		select {
		case <-in.p.Exited():
			in.stopErr = fmt.Errorf("tie %s: the binary had already exited (%v); output:\n%s", in.Deployment, in.p.ExitErr(), in.out)
			return
		default:
		}
		if err := in.p.Signal(syscall.SIGTERM); err != nil {
			in.stopErr = fmt.Errorf("tie %s: SIGTERM: %w", in.Deployment, err)
			return
		}
		timer := time.NewTimer(in.grace)
		defer timer.Stop()
		select {
		case <-in.p.Exited():
			if err := in.p.ExitErr(); err != nil {
				in.stopErr = fmt.Errorf("tie %s: after SIGTERM the binary exited with %v; output:\n%s", in.Deployment, err, in.out)
			}
		case <-timer.C:
			in.stopErr = fmt.Errorf("tie %s: the binary was still running terminationGracePeriodSeconds (%s) after SIGTERM; the kubelet would SIGKILL it", in.Deployment, in.grace)
		}
	})
	return in.stopErr
}

// Close kills the binary if it still runs and removes its files, for when a check has already
// failed; after Stop it does nothing.
func (in *Instance) Close() {
	in.stopOnce.Do(in.cleanup)
}

// cleanup kills the binary if it still runs and removes its files.
func (in *Instance) cleanup() {
	if in.p != nil {
		_ = in.p.Stop(0) // killed at once unless it has exited
	}
	if in.root != "" {
		_ = os.RemoveAll(in.root)
	}
}

// tail keeps the last bytes a binary wrote, for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 8 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = t.buf[len(t.buf)-tailBytes:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
