// Package manifest owns the offline verification of the Kubernetes manifests under deploy/k8s:
// rendering an overlay with the kustomize Go API (the same code kubectl apply -k runs), decoding
// every rendered object strictly into its typed Kubernetes API struct, running kube-score on it,
// and the project's own policy for what kube-score cannot know (the tie to the binaries' settings
// and ports, mounts and the objects the operator creates, and a few security rules it lacks).
//
// Tools: sigs.k8s.io/kustomize/api renders exactly as kubectl does, including generators and
// name-hash references, which no hand-written templating would; k8s.io/apimachinery's strict
// serializer rejects unknown fields, duplicate fields and wrong types case-sensitively, as the API
// server does, which a plain encoding/json decode (case-insensitive) would not; kube-score (a kept
// Kubernetes linter, run as the binary tools/go.mod pins) holds the general workload rules —
// resources, probes, replicas, selectors, disruption budgets, network policies — so that this
// package need not.
package manifest
