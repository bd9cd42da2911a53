package manifest

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// MinReplicas is the floor for every Deployment and HorizontalPodAutoscaler: one pod is one
// node drain away from an outage.
const MinReplicas = 2

// checkDeployment applies the workload policy to one Deployment and its pod template.
func checkDeployment(p *problems, s *Set, d *appsv1.Deployment, opts Options) {
	obj := "Deployment " + d.Name
	if d.Spec.Replicas == nil || *d.Spec.Replicas < MinReplicas {
		p.add(obj, "replicas is %s; want at least %d", int32String(d.Spec.Replicas), MinReplicas)
	}
	pod := &d.Spec.Template.Spec
	if ok, err := selects(d.Spec.Selector, d.Spec.Template.Labels); err != nil || !ok {
		p.add(obj, "selector does not select the pod template's labels %v (%v)", d.Spec.Template.Labels, err)
	}
	checkPodSecurity(p, obj, pod)
	checkTopologySpread(p, obj, d)
	if len(pod.Containers) != 1 {
		p.add(obj, "has %d containers; want exactly 1 (the service binary)", len(pod.Containers))
	}
	if len(pod.InitContainers) > 0 {
		p.add(obj, "has init containers; the image holds only the service binary")
	}
	for i := range pod.Containers {
		c := &pod.Containers[i]
		cobj := obj + " container " + c.Name
		checkContainerSecurity(p, cobj, pod, c)
		checkResources(p, cobj, c)
		checkListeners(p, cobj, c)
		checkProbes(p, cobj, c)
		checkMounts(p, cobj, s, d.Namespace, pod, c, opts)
		checkGrace(p, cobj, pod, c)
		if len(c.Command) > 0 {
			p.add(cobj, "command %v overrides the image's entrypoint; pass settings as env or args", c.Command)
		}
		if len(c.EnvFrom) > 0 {
			p.add(cobj, "envFrom hides setting names from review and from the tie check; list env one by one")
		}
		if img := c.Image; img == "" || strings.HasSuffix(img, ":latest") || !strings.Contains(path.Base(img), ":") && !strings.Contains(img, "@") {
			p.add(cobj, "image %q has no pinned tag or digest", img)
		}
	}
}

func int32String(v *int32) string {
	if v == nil {
		return "unset"
	}
	return strconv.Itoa(int(*v))
}

// checkPodSecurity wants the Pod Security Standards' restricted profile at pod level and no
// Kubernetes API credentials, which the services never use.
func checkPodSecurity(p *problems, obj string, pod *corev1.PodSpec) {
	sc := pod.SecurityContext
	if sc == nil {
		p.add(obj, "pod has no securityContext")
		return
	}
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		p.add(obj, "pod securityContext.runAsNonRoot is not true")
	}
	if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		p.add(obj, "pod securityContext.runAsUser is 0 (root)")
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		p.add(obj, "pod securityContext.seccompProfile.type is not RuntimeDefault")
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		p.add(obj, "automountServiceAccountToken is not false; the services never call the Kubernetes API")
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		p.add(obj, "uses the host's network, PID or IPC namespace")
	}
}

// checkContainerSecurity wants a non-root, read-only container with every capability dropped
// and no way to regain privileges.
func checkContainerSecurity(p *problems, obj string, pod *corev1.PodSpec, c *corev1.Container) {
	sc := c.SecurityContext
	if sc == nil {
		p.add(obj, "has no securityContext")
		return
	}
	podNonRoot := pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot
	if sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot || sc.RunAsNonRoot == nil && !podNonRoot {
		p.add(obj, "runAsNonRoot is not true")
	}
	if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		p.add(obj, "runAsUser is 0 (root)")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		p.add(obj, "readOnlyRootFilesystem is not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		p.add(obj, "allowPrivilegeEscalation is not false")
	}
	if sc.Privileged != nil && *sc.Privileged {
		p.add(obj, "is privileged")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		p.add(obj, "capabilities.drop does not hold ALL")
	}
	if sc.Capabilities != nil && len(sc.Capabilities.Add) > 0 {
		p.add(obj, "adds capabilities %v", sc.Capabilities.Add)
	}
}

// checkResources wants CPU and memory requests (the scheduler and the CPU autoscaler need them)
// and limits no lower than the requests.
func checkResources(p *problems, obj string, c *corev1.Container) {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := c.Resources.Requests[name]
		lim, hasLim := c.Resources.Limits[name]
		if !hasReq {
			p.add(obj, "has no %s request", name)
		}
		if !hasLim {
			p.add(obj, "has no %s limit", name)
		}
		if hasReq && hasLim && lim.Cmp(req) < 0 {
			p.add(obj, "%s limit %s is below its request %s", name, lim.String(), req.String())
		}
		if hasReq && req.Sign() <= 0 {
			p.add(obj, "%s request %s is not positive", name, req.String())
		}
	}
}

// checkListeners wants the ports named http and grpc, each carried by the listen address the
// binary is given, and no port the binary does not listen on.
func checkListeners(p *problems, obj string, c *corev1.Container) {
	seen := map[int32]bool{}
	for _, port := range c.Ports {
		if seen[port.ContainerPort] {
			p.add(obj, "declares port %d twice", port.ContainerPort)
		}
		seen[port.ContainerPort] = true
		if port.Protocol != "" && port.Protocol != corev1.ProtocolTCP {
			p.add(obj, "port %s has protocol %s; want TCP", port.Name, port.Protocol)
		}
	}
	names := map[string]bool{}
	for _, l := range Listeners {
		names[l.PortName] = true
		v, ok, err := Setting(c, l.Env, l.Flag)
		switch {
		case err != nil:
			p.add(obj, "%v", err)
			continue
		case !ok:
			p.add(obj, "does not set %s (or -%s); the binary's default port would go unchecked", l.Env, l.Flag)
			continue
		}
		n, err := ListenPort(v)
		if err != nil {
			p.add(obj, "%s: %v", l.Env, err)
			continue
		}
		var declared *corev1.ContainerPort
		for i := range c.Ports {
			if c.Ports[i].Name == l.PortName {
				declared = &c.Ports[i]
			}
		}
		switch {
		case declared == nil:
			p.add(obj, "declares no port named %s", l.PortName)
		case declared.ContainerPort != n:
			p.add(obj, "port %s is %d but %s listens on %d", l.PortName, declared.ContainerPort, l.Env, n)
		}
	}
	for _, port := range c.Ports {
		if !names[port.Name] {
			p.add(obj, "declares port %q (%d), which the binary does not listen on", port.Name, port.ContainerPort)
		}
	}
}

// checkProbes wants readiness and liveness probes the binary answers: HTTP or native gRPC on a
// declared port (no exec: the distroless image has no shell).
func checkProbes(p *problems, obj string, c *corev1.Container) {
	if c.ReadinessProbe == nil {
		p.add(obj, "has no readinessProbe")
	}
	if c.LivenessProbe == nil {
		p.add(obj, "has no livenessProbe")
	}
	for _, pr := range Probes(c) {
		what := obj + " " + pr.Kind
		h := pr.Probe.ProbeHandler
		switch {
		case h.HTTPGet != nil:
			if _, err := ContainerPort(c, h.HTTPGet.Port); err != nil {
				p.add(what, "httpGet: %v", err)
			}
			if !strings.HasPrefix(h.HTTPGet.Path, "/") {
				p.add(what, "httpGet path %q does not start with /", h.HTTPGet.Path)
			}
			if h.HTTPGet.Scheme != "" && h.HTTPGet.Scheme != corev1.URISchemeHTTP {
				p.add(what, "httpGet scheme %s; the binaries serve plain HTTP", h.HTTPGet.Scheme)
			}
		case h.GRPC != nil:
			port, err := ContainerPort(c, intOrInt(h.GRPC.Port))
			switch {
			case err != nil:
				p.add(what, "grpc: %v", err)
			case port.Name != "grpc":
				p.add(what, "grpc probe on port %d (%s); want the port named grpc", port.ContainerPort, port.Name)
			}
		case h.TCPSocket != nil:
			if _, err := ContainerPort(c, h.TCPSocket.Port); err != nil {
				p.add(what, "tcpSocket: %v", err)
			}
		default:
			p.add(what, "is neither httpGet, grpc nor tcpSocket (the image has no shell for exec)")
		}
	}
}

// checkGrace wants the pod's termination grace period to outlast the binary's drain, so that
// SIGKILL never cuts an in-flight request.
func checkGrace(p *problems, obj string, pod *corev1.PodSpec, c *corev1.Container) {
	budget, err := ShutdownBudget(c)
	if err != nil {
		p.add(obj, "%v", err)
		return
	}
	grace := 30 * time.Second // Kubernetes' default
	if pod.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	}
	if grace <= budget {
		p.add(obj, "terminationGracePeriodSeconds is %s, not longer than the binary's drain (%s + %s = %s)",
			grace, EnvShutdownDelay, EnvShutdownGrace, budget)
	}
}

// checkTopologySpread wants the pods spread over nodes (and zones), each constraint selecting
// this Deployment's own pods.
func checkTopologySpread(p *problems, obj string, d *appsv1.Deployment) {
	tsc := d.Spec.Template.Spec.TopologySpreadConstraints
	byHost := false
	for _, t := range tsc {
		if ok, err := selects(t.LabelSelector, d.Spec.Template.Labels); err != nil || !ok {
			p.add(obj, "topology spread on %s does not select the pods (%v)", t.TopologyKey, err)
		}
		if t.TopologyKey == "kubernetes.io/hostname" {
			byHost = true
		}
	}
	if !byHost {
		p.add(obj, "has no topology spread constraint over kubernetes.io/hostname")
	}
}
