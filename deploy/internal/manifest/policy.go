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

// Check applies the deployment policy to a decoded overlay and reports every violation at once.
func Check(s *Set, opts Options) error {
	p := &problems{}
	if len(s.Deployments) == 0 && len(s.Ingresses) == 0 {
		p.add("overlay", "renders no Deployment and no Ingress")
	}
	checkNamespaces(p, s)
	for _, d := range s.Deployments {
		checkDeployment(p, s, d, opts)
		checkCompanions(p, s, d)
	}
	for _, svc := range s.Services {
		checkService(p, s, svc)
	}
	for _, h := range s.HPAs {
		checkHPA(p, s, h)
	}
	for _, b := range s.PDBs {
		checkPDB(p, s, b)
	}
	for _, n := range s.NetworkPolicies {
		checkNetworkPolicy(p, s, n)
	}
	for _, ing := range s.Ingresses {
		checkIngress(p, s, ing)
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

// selectedDeployments lists the Deployments whose pods sel selects.
func selectedDeployments(s *Set, sel *metav1.LabelSelector) ([]*appsv1.Deployment, error) {
	var out []*appsv1.Deployment
	for _, d := range s.Deployments {
		ok, err := selects(sel, d.Spec.Template.Labels)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// checkNamespaces wants every object in one namespace and, when the overlay creates that
// namespace, Pod Security Admission enforcing the restricted profile on it.
func checkNamespaces(p *problems, s *Set) {
	seen := map[string][]string{}
	note := func(kind string, m metav1.ObjectMeta) {
		seen[m.Namespace] = append(seen[m.Namespace], kind+" "+m.Name)
	}
	for _, o := range s.Deployments {
		note("Deployment", o.ObjectMeta)
	}
	for _, o := range s.Services {
		note("Service", o.ObjectMeta)
	}
	for _, o := range s.HPAs {
		note("HorizontalPodAutoscaler", o.ObjectMeta)
	}
	for _, o := range s.PDBs {
		note("PodDisruptionBudget", o.ObjectMeta)
	}
	for _, o := range s.NetworkPolicies {
		note("NetworkPolicy", o.ObjectMeta)
	}
	for _, o := range s.Ingresses {
		note("Ingress", o.ObjectMeta)
	}
	for _, o := range s.ConfigMaps {
		note("ConfigMap", o.ObjectMeta)
	}
	for _, o := range s.Secrets {
		note("Secret", o.ObjectMeta)
	}
	if len(seen) > 1 {
		namespaces := make([]string, 0, len(seen))
		for ns := range seen {
			namespaces = append(namespaces, fmt.Sprintf("%q (%d objects)", ns, len(seen[ns])))
		}
		slices.Sort(namespaces)
		p.add("overlay", "objects are spread over namespaces %v; want one", namespaces)
	}
	for _, ns := range s.Namespaces {
		if _, used := seen[ns.Name]; !used {
			p.add("Namespace "+ns.Name, "no object of the overlay lives in it")
		}
		if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
			p.add("Namespace "+ns.Name, "label pod-security.kubernetes.io/enforce is %q; want restricted", got)
		}
	}
}
