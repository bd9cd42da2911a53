package manifest

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// checkCompanions wants each Deployment fronted by exactly one Service and guarded by exactly one
// HorizontalPodAutoscaler and PodDisruptionBudget, and by at least one NetworkPolicy.
func checkCompanions(p *problems, s *Set, d *appsv1.Deployment) {
	obj := "Deployment " + d.Name
	pods := d.Spec.Template.Labels
	count := func(sels []*metav1.LabelSelector) int {
		n := 0
		for _, sel := range sels {
			if ok, err := selects(sel, pods); err == nil && ok {
				n++
			}
		}
		return n
	}
	var svcSels, pdbSels, npSels []*metav1.LabelSelector
	for _, svc := range s.Services {
		svcSels = append(svcSels, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector})
	}
	for _, b := range s.PDBs {
		pdbSels = append(pdbSels, b.Spec.Selector)
	}
	for _, n := range s.NetworkPolicies {
		npSels = append(npSels, &n.Spec.PodSelector)
	}
	hpas := 0
	for _, h := range s.HPAs {
		if targets(h, d) {
			hpas++
		}
	}
	for _, c := range []struct {
		kind     string
		got, min int
		exact    bool
	}{
		{"Service", count(svcSels), 1, true},
		{"PodDisruptionBudget", count(pdbSels), 1, true},
		{"HorizontalPodAutoscaler", hpas, 1, true},
		{"NetworkPolicy", count(npSels), 1, false},
	} {
		if c.got < c.min || c.exact && c.got > c.min {
			p.add(obj, "is covered by %d %s objects; want %s1", c.got, c.kind, map[bool]string{true: "", false: "at least "}[c.exact])
		}
	}
}

func targets(h *autoscalingv2.HorizontalPodAutoscaler, d *appsv1.Deployment) bool {
	r := h.Spec.ScaleTargetRef
	return r.APIVersion == "apps/v1" && r.Kind == "Deployment" && r.Name == d.Name
}

// onlyDeployment is the one Deployment a selector selects, with a problem reported otherwise.
func onlyDeployment(p *problems, obj string, s *Set, sel *metav1.LabelSelector) *appsv1.Deployment {
	ds, err := selectedDeployments(s, sel)
	if err != nil {
		p.add(obj, "selector: %v", err)
		return nil
	}
	if len(ds) != 1 {
		names := make([]string, len(ds))
		for i, d := range ds {
			names[i] = d.Name
		}
		p.add(obj, "selects the pods of %d Deployments %v; want exactly 1", len(ds), names)
		return nil
	}
	return ds[0]
}

func firstContainer(d *appsv1.Deployment) *corev1.Container {
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return nil
	}
	return &d.Spec.Template.Spec.Containers[0]
}

// checkService wants ports named http and grpc whose targets are the container ports of the same
// names, on the pods of exactly one Deployment.
func checkService(p *problems, s *Set, svc *corev1.Service) {
	obj := "Service " + svc.Name
	d := onlyDeployment(p, obj, s, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector})
	names := map[string]bool{}
	for _, port := range svc.Spec.Ports {
		names[port.Name] = true
		if d == nil {
			continue
		}
		c := firstContainer(d)
		if c == nil {
			continue
		}
		target := port.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(port.Port) // Kubernetes defaults targetPort to port
		}
		cp, err := ContainerPort(c, target)
		switch {
		case err != nil:
			p.add(obj, "port %s: targetPort %s: %v", port.Name, target.String(), err)
		case cp.Name != port.Name:
			p.add(obj, "port %s targets container port %s (%d); want the container port of the same name", port.Name, cp.Name, cp.ContainerPort)
		}
	}
	for _, l := range Listeners {
		if !names[l.PortName] {
			p.add(obj, "has no port named %s", l.PortName)
		}
	}
}

// checkHPA wants a CPU autoscaler on an existing Deployment with a floor of MinReplicas.
func checkHPA(p *problems, s *Set, h *autoscalingv2.HorizontalPodAutoscaler) {
	obj := "HorizontalPodAutoscaler " + h.Name
	r := h.Spec.ScaleTargetRef
	d := s.Deployment(r.Name)
	if d == nil || !targets(h, d) {
		p.add(obj, "scaleTargetRef %s %s %q is not a Deployment of the overlay", r.APIVersion, r.Kind, r.Name)
	}
	if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < MinReplicas {
		p.add(obj, "minReplicas is %s; want at least %d", int32String(h.Spec.MinReplicas), MinReplicas)
	}
	if h.Spec.MinReplicas != nil && h.Spec.MaxReplicas < *h.Spec.MinReplicas {
		p.add(obj, "maxReplicas %d is below minReplicas %d", h.Spec.MaxReplicas, *h.Spec.MinReplicas)
	}
	if d != nil && d.Spec.Replicas != nil && h.Spec.MinReplicas != nil && *d.Spec.Replicas < *h.Spec.MinReplicas {
		p.add(obj, "minReplicas %d is above the Deployment's replicas %d; every apply would scale down first", *h.Spec.MinReplicas, *d.Spec.Replicas)
	}
	cpu := false
	for _, m := range h.Spec.Metrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU {
			cpu = true
		}
	}
	if !cpu {
		p.add(obj, "does not scale on CPU")
	}
}

// checkPDB wants a budget on exactly one Deployment that still lets a node drain proceed.
func checkPDB(p *problems, s *Set, b *policyv1.PodDisruptionBudget) {
	obj := "PodDisruptionBudget " + b.Name
	d := onlyDeployment(p, obj, s, b.Spec.Selector)
	switch {
	case b.Spec.MaxUnavailable != nil && b.Spec.MinAvailable != nil:
		p.add(obj, "sets both minAvailable and maxUnavailable")
	case b.Spec.MaxUnavailable != nil:
		if b.Spec.MaxUnavailable.Type == intstr.Int && b.Spec.MaxUnavailable.IntVal < 1 {
			p.add(obj, "maxUnavailable %d blocks every voluntary disruption", b.Spec.MaxUnavailable.IntVal)
		}
	case b.Spec.MinAvailable != nil:
		if d != nil && d.Spec.Replicas != nil && b.Spec.MinAvailable.Type == intstr.Int && b.Spec.MinAvailable.IntVal >= *d.Spec.Replicas {
			p.add(obj, "minAvailable %d is not below the %d replicas; node drains would block", b.Spec.MinAvailable.IntVal, *d.Spec.Replicas)
		}
	default:
		p.add(obj, "sets neither minAvailable nor maxUnavailable")
	}
}

// checkNetworkPolicy wants a policy on exactly one Deployment's pods whose ingress ports are
// ports the container declares.
func checkNetworkPolicy(p *problems, s *Set, n *networkingv1.NetworkPolicy) {
	obj := "NetworkPolicy " + n.Name
	d := onlyDeployment(p, obj, s, &n.Spec.PodSelector)
	if !slices.Contains(n.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		p.add(obj, "policyTypes does not hold Ingress")
	}
	if d == nil {
		return
	}
	c := firstContainer(d)
	if c == nil {
		return
	}
	for i, rule := range n.Spec.Ingress {
		if len(rule.Ports) == 0 {
			p.add(obj, "ingress rule %d opens every port", i)
		}
		for _, port := range rule.Ports {
			if port.Port == nil {
				p.add(obj, "ingress rule %d opens every port of a protocol", i)
				continue
			}
			if _, err := ContainerPort(c, *port.Port); err != nil {
				p.add(obj, "ingress rule %d: %v", i, err)
			}
		}
	}
}

// checkIngress wants every backend to name a Service of the set and one of its ports.
func checkIngress(p *problems, s *Set, ing *networkingv1.Ingress) {
	obj := "Ingress " + ing.Name
	var backends []*networkingv1.IngressBackend
	if ing.Spec.DefaultBackend != nil {
		backends = append(backends, ing.Spec.DefaultBackend)
	}
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for i := range r.HTTP.Paths {
			backends = append(backends, &r.HTTP.Paths[i].Backend)
		}
	}
	if len(backends) == 0 {
		p.add(obj, "has no backend")
	}
	for _, b := range backends {
		if b.Service == nil {
			p.add(obj, "has a backend that is not a Service")
			continue
		}
		svc := s.Service(b.Service.Name)
		if svc == nil {
			p.add(obj, "backend Service %q is not in the set", b.Service.Name)
			continue
		}
		if !servicePort(svc, b.Service.Port) {
			p.add(obj, "backend Service %s has no port %s", svc.Name, backendPort(b.Service.Port))
		}
	}
}

func servicePort(svc *corev1.Service, bp networkingv1.ServiceBackendPort) bool {
	for _, port := range svc.Spec.Ports {
		if bp.Name != "" && port.Name == bp.Name || bp.Name == "" && port.Port == bp.Number {
			return true
		}
	}
	return false
}

func backendPort(bp networkingv1.ServiceBackendPort) string {
	if bp.Name != "" {
		return bp.Name
	}
	return fmt.Sprint(bp.Number)
}
