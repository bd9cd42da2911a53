package manifest

import (
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// checkDeployment applies the workload rules to one Deployment and its pod template. Replicas,
// resources, the read-only root file system, user and group ids, privileged mode, image tags and
// readiness probes are kube-score's (see KubeScore).
func checkDeployment(p *problems, s *Set, d *appsv1.Deployment, opts Options) {
	obj := "Deployment " + d.Name
	pod := &d.Spec.Template.Spec
	checkPodSecurity(p, obj, pod)
	checkTopologySpread(p, obj, d)
	// The tie check starts the one service binary the image holds, exactly as declared: kube-score
	// knows nothing of the image or the binary.
	if len(pod.Containers) != 1 || len(pod.InitContainers) > 0 {
		p.add(obj, "has %d containers and %d init containers; want exactly 1 container (the service binary)", len(pod.Containers), len(pod.InitContainers))
	}
	for i := range pod.Containers {
		c := &pod.Containers[i]
		cobj := obj + " container " + c.Name
		checkContainerSecurity(p, cobj, pod, c)
		checkListeners(p, cobj, c)
		checkProbes(p, cobj, c)
		checkMounts(p, cobj, s, d.Namespace, pod, c, opts)
		checkGrace(p, cobj, pod, c)
		// Both would hide from review and from the tie check what the binary is given; kube-score
		// reads neither.
		if len(c.Command) > 0 {
			p.add(cobj, "command %v overrides the image's entrypoint; pass settings as env or args", c.Command)
		}
		if len(c.EnvFrom) > 0 {
			p.add(cobj, "envFrom hides setting names from review and from the tie check; list env one by one")
		}
		// kube-score's container-image-pull-policy wants Always; prod silences it because its images
		// are pinned by digest, which kube-score cannot see. This keeps that reason true.
		if silenced(d, "container-image-pull-policy") && !strings.Contains(c.Image, "@sha256:") {
			p.add(cobj, "silences kube-score's container-image-pull-policy but names image %q by tag; a tag can move, pin it by digest", c.Image)
		}
	}
}

// silenced reports whether the Deployment or its pod template turns kube-score's check off with
// a kube-score/ignore annotation.
func silenced(d *appsv1.Deployment, check string) bool {
	for _, a := range []map[string]string{d.Annotations, d.Spec.Template.Annotations} {
		for _, id := range strings.Split(a["kube-score/ignore"], ",") {
			if strings.TrimSpace(id) == check {
				return true
			}
		}
	}
	return false
}

// checkPodSecurity wants the pod-level part of the restricted profile that kube-score has no
// check for: its seccomp check is optional and takes any profile (Unconfined too), and it has none
// for service-account tokens or the host's namespaces.
func checkPodSecurity(p *problems, obj string, pod *corev1.PodSpec) {
	sc := pod.SecurityContext
	if sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		p.add(obj, "pod securityContext.seccompProfile.type is not RuntimeDefault")
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		p.add(obj, "automountServiceAccountToken is not false; the services never call the Kubernetes API")
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		p.add(obj, "uses the host's network, PID or IPC namespace")
	}
}

// checkContainerSecurity wants a container that cannot become root or regain privileges.
// kube-score checks the user and group ids (container-security-context-user-group-id) but not
// runAsNonRoot, which makes the kubelet refuse an image whose user is root, and has no check for
// capabilities or allowPrivilegeEscalation.
func checkContainerSecurity(p *problems, obj string, pod *corev1.PodSpec, c *corev1.Container) {
	nonRoot := pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot
	sc := c.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	if sc.RunAsNonRoot != nil {
		nonRoot = *sc.RunAsNonRoot
	}
	if !nonRoot {
		p.add(obj, "runAsNonRoot is not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		p.add(obj, "allowPrivilegeEscalation is not false")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		p.add(obj, "capabilities.drop does not hold ALL, or capabilities.add is not empty")
	}
}

// checkListeners wants the ports named http, grpc and probe, each carried by the listen address the
// binary is given, and no port the binary does not listen on. kube-score cannot know which
// addresses the binary listens on (its optional container-ports-check only checks names).
func checkListeners(p *problems, obj string, c *corev1.Container) {
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

// checkProbes wants every probe to be one the binary answers: HTTP or native gRPC on a declared
// port (no exec: the distroless image has no shell). kube-score checks that a readiness probe
// exists and differs from the liveness probe, not where the probes point.
func checkProbes(p *problems, obj string, c *corev1.Container) {
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
			port, err := ContainerPort(c, intstr.FromInt32(h.GRPC.Port))
			switch {
			case err != nil:
				p.add(what, "grpc: %v", err)
			case pr.Kind == "readinessProbe" && port.Name != "probe":
				p.add(what, "grpc probe on port %d (%s); want the port named probe, which no other caller can starve", port.ContainerPort, port.Name)
			case port.Name != "grpc" && port.Name != "probe":
				p.add(what, "grpc probe on port %d (%s); want the port named probe or grpc", port.ContainerPort, port.Name)
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
// SIGKILL never cuts an in-flight request. The drain is the binary's own setting, which kube-score
// cannot read.
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

// checkTopologySpread wants the pods spread over nodes, each constraint selecting this
// Deployment's own pods. kube-score's pod-topology-spread-constraints checks that a selector is
// there, not what it selects; and the hostname spread stands in for the host podAntiAffinity whose
// kube-score check (deployment-has-host-podantiaffinity) the base silences.
func checkTopologySpread(p *problems, obj string, d *appsv1.Deployment) {
	byHost := false
	for _, t := range d.Spec.Template.Spec.TopologySpreadConstraints {
		if ok, err := selects(t.LabelSelector, d.Spec.Template.Labels); err != nil || !ok {
			p.add(obj, "topology spread on %s does not select the pods (%v)", t.TopologyKey, err)
		}
		byHost = byHost || t.TopologyKey == "kubernetes.io/hostname"
	}
	if !byHost {
		p.add(obj, "has no topology spread constraint over kubernetes.io/hostname")
	}
}
