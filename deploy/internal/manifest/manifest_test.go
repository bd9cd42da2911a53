package manifest

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/deploy/internal/yamledit"
)

// k8sDir is deploy/k8s seen from this package's directory (go test runs in it).
var k8sDir = filepath.Join("..", "..", "k8s")

// overlay is one renderable tree of deploy/k8s and what the operator supplies beside it.
type overlay struct {
	name     string
	dirs     []string // rendered and decoded together
	external []Created
}

func overlays(t *testing.T) []overlay {
	t.Helper()
	return []overlay{
		{name: "dev", dirs: []string{"overlays/dev"}},
		{name: "prod", dirs: []string{"overlays/prod"}, external: operatorCreated(t)},
		{name: "prod+ingress-example", dirs: []string{"overlays/prod", "ingress-example"}, external: operatorCreated(t)},
		{name: "prod-monitoring", dirs: []string{"overlays/prod-monitoring"}, external: operatorCreated(t)},
	}
}

func renderAll(t *testing.T, o overlay) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, d := range o.dirs {
		got, err := Render(filepath.Join(k8sDir, d))
		if err != nil {
			t.Fatalf("Render(%s): %v", d, err)
		}
		docs = append(docs, got...)
	}
	return docs
}

func TestOverlaysRenderDecodeAndPassPolicy(t *testing.T) {
	t.Parallel()
	for _, o := range overlays(t) {
		t.Run(o.name, func(t *testing.T) {
			t.Parallel()
			docs := renderAll(t, o)
			s, err := Decode(docs)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got := len(s.Deployments); got != 2 {
				t.Errorf("got %d Deployments; want 2 (scoring and forecast)", got)
			}
			if err := Check(s, Options{External: o.external}); err != nil {
				t.Errorf("Check: %v", err)
			}
			if err := KubeScore(context.Background(), kubeScore, docs); err != nil {
				t.Errorf("KubeScore: %v", err)
			}
		})
	}
}

func TestIngressExampleMapsBothServices(t *testing.T) {
	t.Parallel()
	docs, err := Render(filepath.Join(k8sDir, "ingress-example"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(docs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ing := range s.Ingresses {
		for _, r := range ing.Spec.Rules {
			for _, p := range r.HTTP.Paths {
				got[r.Host] = p.Backend.Service.Name + ":" + p.Backend.Service.Port.Name
			}
		}
	}
	want := map[string]string{
		"scoring.example.com":       "scoring:http",
		"forecast.example.com":      "forecast:http",
		"grpc.scoring.example.com":  "scoring:grpc",
		"grpc.forecast.example.com": "forecast:grpc",
	}
	for host, backend := range want {
		if got[host] != backend {
			t.Errorf("host %s routes to %q; want %q", host, got[host], backend)
		}
	}
}

// mutate rewrites the object of the given kind and name in a copy of docs.
func mutate(t *testing.T, docs [][]byte, kind, name string, change func(obj map[string]any)) [][]byte {
	t.Helper()
	out, err := yamledit.Mutate(docs, kind, name, func(o map[string]any) error { change(o); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// at walks obj along keys (string for maps, int for lists) and returns the map there.
func at(t *testing.T, obj any, path ...any) map[string]any {
	t.Helper()
	m, err := yamledit.At(obj, path...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func containerOf(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	c, err := yamledit.Container(obj)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func named(t *testing.T, obj map[string]any, list, name string) map[string]any {
	t.Helper()
	m, err := yamledit.Named(obj, list, name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func envVar(t *testing.T, c map[string]any, name string) map[string]any {
	return named(t, c, "env", name)
}

func portNamed(t *testing.T, c map[string]any, name string) map[string]any {
	return named(t, c, "ports", name)
}

// TestEachCheckFailsOnTheTypoItGuardsAgainst mutates rendered manifests one typo at a time and
// wants the stage that guards against it (strict decoding, the policy or kube-score) to name the
// problem. A typo kube-score catches must pass the policy: the policy holds no rule kube-score has.
func TestEachCheckFailsOnTheTypoItGuardsAgainst(t *testing.T) {
	t.Parallel()
	all := overlays(t)
	dev, prod, mon := all[0], all[2], all[3]
	type stage int
	const (
		decode stage = iota
		policy
		score
	)
	tests := []struct {
		name    string
		overlay overlay
		kind    string
		obj     string
		change  func(t *testing.T, obj map[string]any)
		stage   stage
		want    string
	}{
		{"unknown field", dev, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			c := containerOf(t, o)
			c["readinesProbe"] = c["readinessProbe"]
			delete(c, "readinessProbe")
		}, decode, `unknown field "spec.template.spec.containers[0].readinesProbe"`},
		{"field name in the wrong case", prod, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			p := portNamed(t, containerOf(t, o), "grpc")
			p["containerport"] = p["containerPort"]
			delete(p, "containerPort")
		}, decode, `unknown field "spec.template.spec.containers[0].ports[1].containerport"`},
		{"string for a number", dev, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			at(t, o, "spec")["replicas"] = "3"
		}, decode, "replicas"},
		{"number for a string", prod, "Service", "scoring", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "ports", 0)["name"] = 8080
		}, decode, "spec.ports.name of type string"},
		{"unknown field in an Ingress", prod, "Ingress", "yardstick", func(t *testing.T, o map[string]any) {
			at(t, o, "spec")["ingressClass"] = "nginx"
		}, decode, `unknown field "spec.ingressClass"`},
		{"misspelt kind", dev, "PodDisruptionBudget", "forecast", func(t *testing.T, o map[string]any) {
			o["kind"] = "PodDisruptionBudgit"
		}, decode, "PodDisruptionBudgit"},
		{"retired API version", prod, "HorizontalPodAutoscaler", "scoring", func(t *testing.T, o map[string]any) {
			o["apiVersion"] = "autoscaling/v2beta2"
		}, decode, "autoscaling/v2beta2"},
		{"kind outside the allowed set", dev, "Service", "forecast", func(t *testing.T, o map[string]any) {
			o["kind"] = "Endpoints"
			delete(o, "spec")
		}, decode, "is not one a Yardstick manifest may hold"},
		{"container port differs from the listen address", dev, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			portNamed(t, containerOf(t, o), "grpc")["containerPort"] = 9099
		}, policy, "port grpc is 9099 but YARDSTICK_GRPC_ADDR listens on 9090"},
		{"listen address differs from the container port", prod, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			envVar(t, containerOf(t, o), "YARDSTICK_HTTP_ADDR")["value"] = ":8080"
		}, policy, "port http is 8081 but YARDSTICK_HTTP_ADDR listens on 8080"},
		{"listen address env misspelt", dev, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			envVar(t, containerOf(t, o), "YARDSTICK_GRPC_ADDR")["name"] = "YARDSTICK_GRCP_ADDR"
		}, policy, "does not set YARDSTICK_GRPC_ADDR"},
		{"grpc probe on the other service's port", prod, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			at(t, containerOf(t, o), "readinessProbe", "grpc")["port"] = 9091
		}, policy, "port 9091 is not a declared port of container scoring"},
		{"readiness probe on the main gRPC port", prod, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			at(t, containerOf(t, o), "readinessProbe", "grpc")["port"] = 9090
		}, policy, "grpc probe on port 9090 (grpc); want the port named probe"},
		{"probe listener not set", dev, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			envVar(t, containerOf(t, o), "YARDSTICK_PROBE_ADDR")["name"] = "YARDSTICK_PROBE_ADDRESS"
		}, policy, "does not set YARDSTICK_PROBE_ADDR"},
		{"probe port in the Service", prod, "Service", "forecast", func(t *testing.T, o map[string]any) {
			at(t, o, "spec")["ports"] = append(at(t, o, "spec")["ports"].([]any), map[string]any{"name": "probe", "port": 9191, "targetPort": "probe", "protocol": "TCP"})
		}, policy, "exposes the probe port, which is the kubelet's alone"},
		{"http probe on a misspelt port name", dev, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			at(t, containerOf(t, o), "livenessProbe", "httpGet")["port"] = "htpp"
		}, policy, "port htpp is not a declared port of container forecast"},
		{"probe path without a slash", dev, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			at(t, containerOf(t, o), "livenessProbe", "httpGet")["path"] = "healthz"
		}, policy, `path "healthz" does not start with /`},
		{"no readiness probe", prod, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			delete(containerOf(t, o), "readinessProbe")
		}, score, "pod-probes: Container is missing a readinessProbe"},
		{"Service targets a misspelt port name", prod, "Service", "scoring", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "ports", 1)["targetPort"] = "grcp"
		}, policy, "port grpc: targetPort grcp"},
		{"Service port renamed", dev, "Service", "forecast", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "ports", 0)["name"] = "web"
		}, policy, "has no port named http"},
		{"Service selector misspelt", prod, "Service", "forecast", func(t *testing.T, o map[string]any) {
			sel := at(t, o, "spec", "selector")
			sel["app.kubernetes.io/name"] = "forcast"
		}, score, "Service yardstick/forecast: service-targets-pod: The services selector does not match any pods"},
		{"one replica", dev, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			at(t, o, "spec")["replicas"] = 1
		}, score, "Deployment yardstick-dev/forecast: deployment-targeted-by-hpa-does-not-have-replicas-configured: The deployment is targeted by a HPA, but a static replica count is configured"},
		{"writable root file system", prod, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			at(t, containerOf(t, o), "securityContext")["readOnlyRootFilesystem"] = false
		}, score, "container-security-context-readonlyrootfilesystem: (scoring) The pod has a container with a writable root filesystem"},
		{"capabilities kept", dev, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			delete(at(t, containerOf(t, o), "securityContext"), "capabilities")
		}, policy, "capabilities.drop does not hold ALL"},
		{"privilege escalation allowed", prod, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			at(t, containerOf(t, o), "securityContext")["allowPrivilegeEscalation"] = true
		}, policy, "allowPrivilegeEscalation is not false"},
		{"root allowed", dev, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "template", "spec", "securityContext")["runAsNonRoot"] = false
			delete(at(t, containerOf(t, o), "securityContext"), "runAsNonRoot")
		}, policy, "runAsNonRoot is not true"},
		{"no memory limit", prod, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			delete(at(t, containerOf(t, o), "resources", "limits"), "memory")
		}, score, "container-resources: (scoring) Memory limit is not set"},
		{"grace period shorter than the drain", dev, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "template", "spec")["terminationGracePeriodSeconds"] = 20
		}, policy, "terminationGracePeriodSeconds is 20s, not longer than the binary's drain"},
		{"topology spread on misspelt labels", prod, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "template", "spec", "topologySpreadConstraints", 1, "labelSelector", "matchLabels")["app.kubernetes.io/name"] = "forcast"
		}, policy, "topology spread on kubernetes.io/hostname does not select the pods"},
		{"mount of an undeclared volume", dev, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			at(t, containerOf(t, o), "volumeMounts", 2)["name"] = "key"
		}, policy, `mounts volume "key", which the pod does not declare`},
		{"Secret name the operator never creates", prod, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "template", "spec", "volumes", 2, "secret")["secretName"] = "yardstick-forcast-keys"
		}, policy, `names Secret "yardstick-forcast-keys", which is neither rendered nor created by the operator`},
		{"env names a file the Secret does not hold", dev, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			envVar(t, containerOf(t, o), "YARDSTICK_CLIENTS_FILE")["value"] = "/etc/yardstick/clients/client.yaml"
		}, policy, `names file "client.yaml"`},
		{"env path on no mount", prod, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			envVar(t, containerOf(t, o), "YARDSTICK_KEYS_DIR")["value"] = "/etc/yardstik/keys"
		}, policy, "YARDSTICK_KEYS_DIR=/etc/yardstik/keys is on no volume mount"},
		{"autoscaler targets a misspelt Deployment", dev, "HorizontalPodAutoscaler", "forecast", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "scaleTargetRef")["name"] = "forcast"
		}, score, "HorizontalPodAutoscaler yardstick-dev/forecast: horizontalpodautoscaler-has-target: The HPA target does not match anything"},
		{"autoscaler floor of one", prod, "HorizontalPodAutoscaler", "scoring", func(t *testing.T, o map[string]any) {
			at(t, o, "spec")["minReplicas"] = 1
		}, score, "horizontalpodautoscaler-replicas: HPA few replicas"},
		{"disruption budget on misspelt labels", dev, "PodDisruptionBudget", "scoring", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "selector", "matchLabels")["app.kubernetes.io/name"] = "scorng"
		}, score, "Deployment yardstick-dev/scoring: deployment-has-poddisruptionbudget: No matching PodDisruptionBudget was found"},
		{"network policy on misspelt labels", prod, "NetworkPolicy", "forecast", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "podSelector", "matchLabels")["app.kubernetes.io/part-of"] = "yardstik"
		}, score, "NetworkPolicy yardstick/forecast: networkpolicy-targets-pod: The NetworkPolicys selector doesn't match any pods"},
		{"network policy opens a misspelt port", dev, "NetworkPolicy", "scoring", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "ingress", 0, "ports", 1)["port"] = "grcp"
		}, policy, "port grcp is not a declared port of container scoring"},
		{"ingress backend on a misspelt port", prod, "Ingress", "yardstick", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "rules", 1, "http", "paths", 0, "backend", "service", "port")["name"] = "htp"
		}, score, "ingress-targets-service: (/) No service match was found: No service with name forecast and port named htp was found"},
		{"ingress backend on a misspelt Service", prod, "Ingress", "yardstick-grpc", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "rules", 0, "http", "paths", 0, "backend", "service")["name"] = "scorin"
		}, score, "ingress-targets-service: (/) No service match was found: No service with name scorin and port named grpc was found"},
		{"object in another namespace", dev, "Service", "scoring", func(t *testing.T, o map[string]any) {
			at(t, o, "metadata")["namespace"] = "default"
		}, policy, "objects are spread over namespaces"},
		{"no ephemeral-storage limit", prod, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			delete(at(t, containerOf(t, o), "resources", "limits"), "ephemeral-storage")
		}, score, "container-ephemeral-storage-request-and-limit: (forecast) Ephemeral Storage limit is not set"},
		{"mutable tag pulled only when absent", dev, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			containerOf(t, o)["imagePullPolicy"] = "IfNotPresent"
		}, score, "container-image-pull-policy: (scoring) ImagePullPolicy is not set to Always"},
		{"prod image by tag where the pull-policy check is silenced", prod, "Deployment", "scoring", func(t *testing.T, o map[string]any) {
			containerOf(t, o)["image"] = "ghcr.io/yardstick-dev/yardstick-scoring:v1.0.0"
		}, policy, `silences kube-score's container-image-pull-policy but names image "ghcr.io/yardstick-dev/yardstick-scoring:v1.0.0" by tag`},
		{"anti-affinity silenced without a spread over nodes", dev, "Deployment", "forecast", func(t *testing.T, o map[string]any) {
			spec := at(t, o, "spec", "template", "spec")
			spec["topologySpreadConstraints"] = spec["topologySpreadConstraints"].([]any)[:1]
		}, policy, "has no topology spread constraint over kubernetes.io/hostname"},
		{"disruption budget at the autoscaler's floor", prod, "PodDisruptionBudget", "scoring", func(t *testing.T, o map[string]any) {
			spec := at(t, o, "spec")
			delete(spec, "maxUnavailable")
			spec["minAvailable"] = 3
		}, policy, "minAvailable 3 is not below the 3 replicas of Deployment scoring at its autoscaler's floor"},
		{"unknown field in a PodMonitor", mon, "PodMonitor", "yardstick", func(t *testing.T, o map[string]any) {
			ep := at(t, o, "spec", "podMetricsEndpoints", 0)
			ep["scrapeInterval"] = ep["interval"]
			delete(ep, "interval")
		}, decode, `unknown field "spec.podMetricsEndpoints[0].scrapeInterval"`},
		{"unknown field in a PrometheusRule", mon, "PrometheusRule", "yardstick", func(t *testing.T, o map[string]any) {
			r := at(t, o, "spec", "groups", 2, "rules", 0)
			r["annotation"] = r["annotations"]
			delete(r, "annotations")
		}, decode, `unknown field "spec.groups[2].rules[0].annotation"`},
		{"PodMonitor on the gRPC port", mon, "PodMonitor", "yardstick", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "podMetricsEndpoints", 0)["port"] = "grpc"
		}, policy, "podMetricsEndpoints[0] does not scrape the port named http"},
		{"PodMonitor on a misspelt path", mon, "PodMonitor", "yardstick", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "podMetricsEndpoints", 0)["path"] = "/metric"
		}, policy, `scrapes path "/metric"; the binaries serve /metrics`},
		{"PodMonitor misses a service", mon, "PodMonitor", "yardstick", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "selector", "matchExpressions", 0)["values"] = []any{"scoring", "forcast"}
		}, policy, "does not select the pods of Deployment forecast"},
		{"alert without a runbook", mon, "PrometheusRule", "yardstick", func(t *testing.T, o map[string]any) {
			delete(at(t, o, "spec", "groups", 2, "rules", 0, "annotations"), "runbook_url")
		}, policy, "alert YardstickPodNotReady: no runbook_url annotation"},
		{"alert's runbook at another alert's", mon, "PrometheusRule", "yardstick", func(t *testing.T, o map[string]any) {
			at(t, o, "spec", "groups", 2, "rules", 1, "annotations")["runbook_url"] = "docs/operations.md#yardstickpodnotready"
		}, policy, `alert YardstickNoReadyPod: runbook_url is "docs/operations.md#yardstickpodnotready"; want "docs/operations.md#yardsticknoreadypod"`},
	}
	rendered := map[string][][]byte{}
	for _, o := range []overlay{dev, prod, mon} {
		rendered[o.name] = renderAll(t, o)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			docs := mutate(t, rendered[tc.overlay.name], tc.kind, tc.obj, func(o map[string]any) { tc.change(t, o) })
			s, err := Decode(docs)
			if tc.stage == decode {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Decode error: got %v; want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: got %v; want the mutation to decode", err)
			}
			err = Check(s, Options{External: tc.overlay.external})
			if tc.stage == policy {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Check error: got %v; want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check: got %v; want no error (kube-score's finding, not the policy's)", err)
			}
			err = KubeScore(context.Background(), kubeScore, docs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("KubeScore error: got %v; want one containing %q", err, tc.want)
			}
		})
	}
}

// operatorCreated reads the objects deploy/README.md tells the operator to create.
func operatorCreated(t *testing.T) []Created {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatalf("read deploy/README.md: %v", err)
	}
	return OperatorCreated(readme)
}

// TestReadmeCreatesWhatProdReferences holds the README's kubectl create commands to the prod
// overlay: the same namespace, and exactly the ConfigMaps and Secrets its pods mount.
func TestReadmeCreatesWhatProdReferences(t *testing.T) {
	t.Parallel()
	created := operatorCreated(t)
	docs, err := Render(filepath.Join(k8sDir, "overlays/prod"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(docs)
	if err != nil {
		t.Fatal(err)
	}
	referenced := map[string]bool{}
	for _, d := range s.Deployments {
		for _, v := range d.Spec.Template.Spec.Volumes {
			if kind, name, _ := VolumeSource(&v); kind != "" {
				referenced[kind+" "+d.Namespace+"/"+name] = true
			}
		}
	}
	documented := map[string]bool{}
	for _, c := range created {
		documented[c.Kind+" "+c.Namespace+"/"+c.Name] = true
	}
	for r := range referenced {
		if !documented[r] {
			t.Errorf("prod mounts %s; the README does not tell the operator to create it", r)
		}
	}
	for d := range documented {
		if !referenced[d] {
			t.Errorf("the README creates %s; prod does not mount it", d)
		}
	}
}

func TestOperatorCreatedParsesKubectlCommands(t *testing.T) {
	t.Parallel()
	readme := []byte("```sh\n" +
		"kubectl -n yardstick create configmap yardstick-content --from-file=bundle/\n" +
		"kubectl --namespace=ns create secret generic clients \\\n  --from-file=clients.yaml=./mine.yaml\n" +
		"kubectl -n yardstick create secret generic keys --from-file=keys/a.pem --from-file=b.pem\n" +
		"kubectl -n yardstick create secret tls not-this --cert=x --key=y\n```\n")
	got := OperatorCreated(readme)
	want := []Created{
		{Kind: "ConfigMap", Name: "yardstick-content", Namespace: "yardstick", FromDir: true},
		{Kind: "Secret", Name: "clients", Namespace: "ns", Keys: []string{"clients.yaml"}},
		{Kind: "Secret", Name: "keys", Namespace: "yardstick", Keys: []string{"a.pem", "b.pem"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v; want %+v", got, want)
	}
}

// TestDevContentIsTheDemoBundle wants the content ConfigMap the dev pods mount to hold exactly the
// files of pkg/measure/demo/, byte for byte, so that the copy under deploy cannot go stale.
func TestDevContentIsTheDemoBundle(t *testing.T) {
	t.Parallel()
	docs, err := Render(filepath.Join(k8sDir, "overlays/dev"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(docs)
	if err != nil {
		t.Fatal(err)
	}
	demoDir := filepath.Join("..", "..", "..", "pkg", "measure", "demo")
	entries, err := os.ReadDir(demoDir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			t.Fatalf("%s has a subdirectory %s; a ConfigMap holds one flat directory", demoDir, e.Name())
		}
		b, err := os.ReadFile(filepath.Join(demoDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want[e.Name()] = b
	}
	for _, d := range s.Deployments {
		v := Volume(&d.Spec.Template.Spec, "content")
		if v == nil || v.ConfigMap == nil {
			t.Fatalf("Deployment %s has no ConfigMap volume called content", d.Name)
		}
		cm := s.ConfigMap(v.ConfigMap.Name)
		if cm == nil {
			t.Fatalf("Deployment %s mounts ConfigMap %s, which dev does not render", d.Name, v.ConfigMap.Name)
		}
		got := map[string][]byte{}
		for k, val := range cm.Data {
			got[k] = []byte(val)
		}
		for k, val := range cm.BinaryData {
			got[k] = val
		}
		for name, b := range want {
			switch g, ok := got[name]; {
			case !ok:
				t.Errorf("ConfigMap %s lacks %s of the demo bundle (run make deploy-sync-content and list it in the dev kustomization)", cm.Name, name)
			case string(g) != string(b):
				t.Errorf("ConfigMap %s: %s differs from %s (run make deploy-sync-content)", cm.Name, name, filepath.Join(demoDir, name))
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("ConfigMap %s holds %s, which the demo bundle does not", cm.Name, name)
			}
		}
	}
}
