# Deployment targets: container images and the offline checks of deploy/Dockerfile and
# deploy/k8s. Included by the root Makefile; run from the repository root.

IMAGE_REGISTRY ?= ghcr.io/yardstick-dev
# The overlays deploy-render and deploy-score check: prod-monitoring is prod with the optional
# monitoring component (k8s/components/monitoring).
DEPLOY_OVERLAYS := deploy/k8s/overlays/dev deploy/k8s/overlays/prod deploy/k8s/overlays/prod-monitoring
IMAGE_TAG ?= $(VERSION)
# Per service: the build argument values the Dockerfile's final stage needs besides SERVICE.
IMAGE_ARGS_scoring := --build-arg HTTP_PORT=8080 --build-arg GRPC_PORT=9090
IMAGE_ARGS_forecast := --build-arg HTTP_PORT=8081 --build-arg GRPC_PORT=9091

.PHONY: image
image: ## Build the scoring and forecast images (needs a Docker engine with BuildKit).
	@for s in scoring forecast; do \
		args=$$([[ $$s == scoring ]] && echo "$(IMAGE_ARGS_scoring)" || echo "$(IMAGE_ARGS_forecast)"); \
		echo "docker build $$s -> $(IMAGE_REGISTRY)/yardstick-$$s:$(IMAGE_TAG)"; \
		DOCKER_BUILDKIT=1 docker build -f deploy/Dockerfile \
			--build-arg SERVICE=$$s --build-arg VERSION=$(VERSION) $$args \
			-t $(IMAGE_REGISTRY)/yardstick-$$s:$(IMAGE_TAG) . ; \
	done

.PHONY: image-build-check
image-build-check: ## Replay the Dockerfile's build stage on the host (no Docker): binaries in bin/image/.
	go run ./deploy/cmd/imagebuild -dockerfile deploy/Dockerfile -context . -out bin/image -version $(VERSION)

.PHONY: deploy-render
deploy-render: ## Render the dev, prod and prod-monitoring overlays into deploy/.rendered/ and check them (decode + policy).
	go run ./deploy/cmd/render -out deploy/.rendered $(DEPLOY_OVERLAYS)

.PHONY: deploy-score
deploy-score: tools ## Render dev, prod and prod-monitoring, check them, and run kube-score (tools/go.mod) on each: fails on any CRITICAL or WARNING.
	go run ./deploy/cmd/render -kube-score $(TOOLS)/kube-score -out deploy/.rendered $(DEPLOY_OVERLAYS)

.PHONY: deploy-test
deploy-test: ## Run the deploy checks alone: render, strict decode, policy, kube-score, Dockerfile replay, tie to the binaries.
	go test -count=1 github.com/yardstick-dev/yardstick/deploy/...

.PHONY: deploy-sync-content
deploy-sync-content: ## Refresh the dev overlay's copy of the demo bundle from pkg/measure/demo/.
	rm -f deploy/k8s/overlays/dev/content/*
	cp pkg/measure/demo/* deploy/k8s/overlays/dev/content/
	@echo "copied; if files were added or removed, list them under configMapGenerator in deploy/k8s/overlays/dev/kustomization.yaml"

# The monitoring component's rules: promtool (Debian's prometheus package) checks the rule file
# deploy/cmd/alertrules extracts from the PrometheusRule, then runs the alerts' unit tests on it.
MONITORING := deploy/k8s/components/monitoring

.PHONY: check-alerts
check-alerts: ## promtool check rules and promtool test rules on the monitoring component's alerts (k8s/components/monitoring/alerts.test.yaml).
	@command -v promtool >/dev/null || { echo "check-alerts: promtool is missing: apt-get install prometheus" >&2; exit 1; }
	@mkdir -p bin/alerts
	go run ./deploy/cmd/alertrules $(MONITORING)/prometheusrule.yaml > bin/alerts/yardstick.rules.yaml
	cp $(MONITORING)/alerts.test.yaml bin/alerts/alerts.test.yaml
	promtool check rules bin/alerts/yardstick.rules.yaml
	cd bin/alerts && promtool test rules alerts.test.yaml
