package manifest

import (
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Options tune Check to an overlay.
type Options struct {
	// External are the ConfigMaps and Secrets an operator creates outside the manifests (prod's
	// content, clients and keys), each in its namespace. A reference to one neither rendered nor
	// listed here fails.
	External []Created
}

// problems collects every policy violation, each prefixed with the object it concerns.
type problems struct{ list []error }

func (p *problems) add(obj, format string, args ...any) {
	p.list = append(p.list, fmt.Errorf("%s: %s", obj, fmt.Sprintf(format, args...)))
}

func (p *problems) err() error { return errors.Join(p.list...) }

// Check applies the project's own deployment policy to a decoded overlay and reports every
// violation at once. It holds only what kube-score (KubeScore) and the strict decoding cannot
// know: the tie between the manifests and the Yardstick binaries, the objects the operator
// creates, and the few security and availability rules kube-score has no check for. Each rule
// says why no kube-score check covers it.
func Check(s *Set, opts Options) error {
	p := &problems{}
	checkNamespaces(p, s)
	for _, d := range s.Deployments {
		checkDeployment(p, s, d, opts)
	}
	for _, svc := range s.Services {
		checkService(p, s, svc)
	}
	for _, b := range s.PDBs {
		checkPDB(p, s, b)
	}
	for _, n := range s.NetworkPolicies {
		checkNetworkPolicy(p, s, n)
	}
	for _, m := range s.PodMonitors {
		checkPodMonitor(p, s, m)
	}
	for _, r := range s.PrometheusRules {
		checkPrometheusRule(p, r)
	}
	return p.err()
}

// selects reports whether a non-empty label selector matches the pod labels. An empty selector is
// refused: it would select every pod of the namespace.
func selects(sel *metav1.LabelSelector, podLabels map[string]string) (bool, error) {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return false, errors.New("the selector is empty and would select every pod")
	}
	ls, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, err
	}
	return ls.Matches(labels.Set(podLabels)), nil
}

// selectedDeployments lists the Deployments whose pods sel selects. A selector that selects none
// is kube-score's to report (service-targets-pod, networkpolicy-targets-pod,
// deployment-has-poddisruptionbudget); the rules here then have nothing to compare against.
func selectedDeployments(s *Set, sel *metav1.LabelSelector) []*appsv1.Deployment {
	var out []*appsv1.Deployment
	for _, d := range s.Deployments {
		if ok, _ := selects(sel, d.Spec.Template.Labels); ok {
			out = append(out, d)
		}
	}
	return out
}

// checkNamespaces wants every object in one namespace and, when the overlay creates that
// namespace, Pod Security Admission enforcing the restricted profile on it. kube-score matches
// objects within a namespace but never reports one that strayed into another (a ConfigMap there
// just goes missing), and it does not read Namespace objects at all.
func checkNamespaces(p *problems, s *Set) {
	count := map[string]int{}
	for _, o := range s.Objects {
		if o.Kind != "Namespace" {
			count[o.Namespace]++
		}
	}
	if len(count) > 1 {
		var spread []string
		for ns, n := range count {
			spread = append(spread, fmt.Sprintf("%q (%d objects)", ns, n))
		}
		slices.Sort(spread)
		p.add("overlay", "objects are spread over namespaces %v; want one", spread)
	}
	for _, ns := range s.Namespaces {
		if count[ns.Name] == 0 {
			p.add("Namespace "+ns.Name, "no object of the overlay lives in it")
		}
		if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
			p.add("Namespace "+ns.Name, "label pod-security.kubernetes.io/enforce is %q; want restricted", got)
		}
	}
}
