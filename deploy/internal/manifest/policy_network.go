package manifest

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// checkService wants ports named http and grpc (and not the probe port) whose targets are the container ports of the same
// names on the pods the Service selects. kube-score's service-targets-pod checks the selector, not
// the ports; the names matter because the Ingress and the probes address the ports by name.
func checkService(p *problems, s *Set, svc *corev1.Service) {
	obj := "Service " + svc.Name
	names := map[string]bool{}
	for _, port := range svc.Spec.Ports {
		names[port.Name] = true
		target := port.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(port.Port) // Kubernetes defaults targetPort to port
		}
		for _, d := range selectedDeployments(s, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}) {
			for i := range d.Spec.Template.Spec.Containers {
				cp, err := ContainerPort(&d.Spec.Template.Spec.Containers[i], target)
				switch {
				case err != nil:
					p.add(obj, "port %s: targetPort %s: %v", port.Name, target.String(), err)
				case cp.Name != port.Name:
					p.add(obj, "port %s targets container port %s (%d); want the container port of the same name", port.Name, cp.Name, cp.ContainerPort)
				}
			}
		}
	}
	for _, l := range Listeners {
		switch {
		case l.Service && !names[l.PortName]:
			p.add(obj, "has no port named %s", l.PortName)
		case !l.Service && names[l.PortName]:
			p.add(obj, "exposes the %s port, which is the kubelet's alone", l.PortName)
		}
	}
}

// checkPDB wants a budget that still lets a node drain proceed at the autoscaler's floor, the
// lowest replica count the Deployment runs at (it sets no replicas of its own). kube-score's
// poddisruptionbudget-has-policy only wants minAvailable or maxUnavailable to be set, whatever
// their values.
func checkPDB(p *problems, s *Set, b *policyv1.PodDisruptionBudget) {
	obj := "PodDisruptionBudget " + b.Name
	if u := b.Spec.MaxUnavailable; u != nil && u.Type == intstr.Int && u.IntVal < 1 {
		p.add(obj, "maxUnavailable %d blocks every voluntary disruption", u.IntVal)
	}
	m := b.Spec.MinAvailable
	if m == nil || m.Type != intstr.Int {
		return
	}
	for _, d := range selectedDeployments(s, b.Spec.Selector) {
		if floor, ok := minReplicas(s, d); ok && m.IntVal >= floor {
			p.add(obj, "minAvailable %d is not below the %d replicas of Deployment %s at its autoscaler's floor; node drains would block", m.IntVal, floor, d.Name)
		}
	}
}

// minReplicas is the floor of the autoscaler that scales d (1 when the autoscaler leaves it unset,
// as Kubernetes does); ok is false when no autoscaler targets d, which kube-score reports.
func minReplicas(s *Set, d *appsv1.Deployment) (int32, bool) {
	for _, h := range s.HPAs {
		r := h.Spec.ScaleTargetRef
		if r.Kind == "Deployment" && r.Name == d.Name {
			if h.Spec.MinReplicas == nil {
				return 1, true
			}
			return *h.Spec.MinReplicas, true
		}
	}
	return 0, false
}

// checkNetworkPolicy wants every ingress rule to open only ports the selected pods declare, by
// number or name. kube-score checks that policies and pods find each other
// (networkpolicy-targets-pod, pod-networkpolicy), not the ports a rule opens: a misspelt port
// name there silently opens nothing.
func checkNetworkPolicy(p *problems, s *Set, n *networkingv1.NetworkPolicy) {
	obj := "NetworkPolicy " + n.Name
	for _, d := range selectedDeployments(s, &n.Spec.PodSelector) {
		for i, rule := range n.Spec.Ingress {
			if len(rule.Ports) == 0 {
				p.add(obj, "ingress rule %d opens every port", i)
			}
			for _, port := range rule.Ports {
				if port.Port == nil {
					p.add(obj, "ingress rule %d opens every port of a protocol", i)
					continue
				}
				for c := range d.Spec.Template.Spec.Containers {
					if _, err := ContainerPort(&d.Spec.Template.Spec.Containers[c], *port.Port); err != nil {
						p.add(obj, "ingress rule %d: %v", i, err)
					}
				}
			}
		}
	}
}
