package manifest

import (
	"errors"
	"fmt"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// Set is a decoded set of manifests, by kind, each in document order.
type Set struct {
	Namespaces      []*corev1.Namespace
	Deployments     []*appsv1.Deployment
	Services        []*corev1.Service
	HPAs            []*autoscalingv2.HorizontalPodAutoscaler
	PDBs            []*policyv1.PodDisruptionBudget
	NetworkPolicies []*networkingv1.NetworkPolicy
	Ingresses       []*networkingv1.Ingress
	ConfigMaps      []*corev1.ConfigMap
	Secrets         []*corev1.Secret
	// The Prometheus Operator's kinds, from the optional monitoring component.
	PodMonitors     []*monitoringv1.PodMonitor
	PrometheusRules []*monitoringv1.PrometheusRule
	// Objects names every object of the set, of every kind, in document order.
	Objects []Object
}

// Object is one object of a set by kind, namespace and name.
type Object struct{ Kind, Namespace, Name string }

// allowed lists the only kinds (with their API versions) a manifest may hold; anything else —
// another kind, or a known kind at a retired version — is an error.
var allowed = map[schema.GroupVersionKind]bool{
	{Version: "v1", Kind: "Namespace"}:                                     true,
	{Group: "apps", Version: "v1", Kind: "Deployment"}:                     true,
	{Version: "v1", Kind: "Service"}:                                       true,
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}: true,
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}:          true,
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}:     true,
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}:           true,
	{Version: "v1", Kind: "ConfigMap"}:                                     true,
	{Version: "v1", Kind: "Secret"}:                                        true,
	// The monitoring component (k8s/components/monitoring), decoded strictly against the
	// Prometheus Operator's own Go types, as its CRDs' schemas would check them.
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}:     true,
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule"}: true,
}

// newDecoder is a YAML deserializer over the API groups above that fails on unknown fields,
// duplicate fields and wrong types, matching field names case-sensitively.
func newDecoder() (runtime.Decoder, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, autoscalingv2.AddToScheme,
		policyv1.AddToScheme, networkingv1.AddToScheme, monitoringv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	return json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme,
		json.SerializerOptions{Yaml: true, Strict: true}), nil
}

// Decode decodes every document strictly into its typed API struct. It reports every document
// that fails, each named by its position and, when readable, its kind and name.
func Decode(docs [][]byte) (*Set, error) {
	dec, err := newDecoder()
	if err != nil {
		return nil, err
	}
	s := &Set{}
	var errs []error
	for i, doc := range docs {
		if err := s.add(dec, doc); err != nil {
			errs = append(errs, fmt.Errorf("document %d (%s): %w", i+1, describe(doc), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Set) add(dec runtime.Decoder, doc []byte) error {
	obj, gvk, err := dec.Decode(doc, nil, nil)
	if err != nil {
		return err
	}
	if gvk == nil || !allowed[*gvk] {
		return fmt.Errorf("kind %v is not one a Yardstick manifest may hold", gvk)
	}
	if m, err := meta.Accessor(obj); err == nil {
		s.Objects = append(s.Objects, Object{gvk.Kind, m.GetNamespace(), m.GetName()})
	}
	switch o := obj.(type) {
	case *corev1.Namespace:
		s.Namespaces = append(s.Namespaces, o)
	case *appsv1.Deployment:
		s.Deployments = append(s.Deployments, o)
	case *corev1.Service:
		s.Services = append(s.Services, o)
	case *autoscalingv2.HorizontalPodAutoscaler:
		s.HPAs = append(s.HPAs, o)
	case *policyv1.PodDisruptionBudget:
		s.PDBs = append(s.PDBs, o)
	case *networkingv1.NetworkPolicy:
		s.NetworkPolicies = append(s.NetworkPolicies, o)
	case *networkingv1.Ingress:
		s.Ingresses = append(s.Ingresses, o)
	case *corev1.ConfigMap:
		s.ConfigMaps = append(s.ConfigMaps, o)
	case *corev1.Secret:
		s.Secrets = append(s.Secrets, o)
	case *monitoringv1.PodMonitor:
		s.PodMonitors = append(s.PodMonitors, o)
	case *monitoringv1.PrometheusRule:
		s.PrometheusRules = append(s.PrometheusRules, o)
	default:
		return fmt.Errorf("decoded %T, which the set does not hold", obj)
	}
	return nil
}
