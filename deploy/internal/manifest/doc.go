// Package manifest owns the offline verification of the Kubernetes manifests under deploy/k8s:
// rendering an overlay with the kustomize Go API (the same code kubectl apply -k runs), decoding
// every rendered object strictly into its typed Kubernetes API struct, and the deployment policy
// (replicas, probes, resources, security context, ports, selectors, references) that the
// manifests must meet.
//
// Libraries: sigs.k8s.io/kustomize/api renders exactly as kubectl does, including generators and
// name-hash references, which no hand-written templating would; k8s.io/apimachinery's strict
// serializer rejects unknown fields, duplicate fields and wrong types case-sensitively, as the API
// server does, which a plain encoding/json decode (case-insensitive) would not.
package manifest
