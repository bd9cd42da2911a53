# Yardstick — the front door. `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules --warn-undefined-variables

# Every Go package of the workspace (go.work); works from the repository root.
PKGS := github.com/yardstick-dev/yardstick/...
# Modules of the workspace, for per-module commands (go mod tidy, GOWORK=off builds).
MODULES := proto pkg/measure pkg/token pkg/serve services/scoring services/forecast deploy bench cmd internal services/servetest scripts e2e
# Packages whose statement coverage is held to a floor (issue 2 and 3: at least 85%).
COVER_FLOOR := 85
COVERED := pkg/measure pkg/token

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/yardstick-dev/yardstick/pkg/serve.Version=$(VERSION)

# Code generators and buf, pinned in tools/go.mod and built locally: buf runs offline.
TOOLS := bin/tools
TOOL_PKGS := github.com/bufbuild/buf/cmd/buf \
	google.golang.org/protobuf/cmd/protoc-gen-go \
	google.golang.org/grpc/cmd/protoc-gen-go-grpc \
	github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto \
	github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway \
	github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2 \
	github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen \
	github.com/zegl/kube-score/cmd/kube-score \
	./protoc-gen-yardstick-json

# The contract's Opaque-API build, for jsonwire's fail-closed tests (made by its generate.sh).
OPAQUE := pkg/serve/internal/jsonwire/testdata/opaque
# The throwaway contract pkg/serve's TestThrowawayEndpoint serves: generated as the contract is.
THROWAWAY := pkg/serve/testdata/throwaway

GO_FILES = $(shell git ls-files --cached --others --exclude-standard '*.go' | grep -v -E '\.pb(\.gw)?\.go$$' | while read -r f; do [[ -f $$f ]] && echo $$f; done)

.PHONY: help
help: ## List the targets.
	@# Names padded to the longest; colour only on a terminal; a description ending in ':' is
	@# followed by the target's prerequisites, so the ci line always lists every check it runs.
	@colour=; [[ -t 1 ]] && colour=1; awk -v colour="$$colour" ' \
		/^[a-zA-Z0-9_.-]+:.*## / { \
			name = $$0; sub(/:.*/, "", name); desc = $$0; sub(/^[^#]*## /, "", desc); \
			if (desc ~ /:$$/) { deps = $$0; sub(/^[^:]*:/, "", deps); sub(/##.*/, "", deps); \
				gsub(/[ \t]+/, " ", deps); sub(/^ /, "", deps); sub(/ $$/, "", deps); desc = desc " " deps "." } \
			n++; names[n] = name; descs[n] = desc; if (length(name) > w) w = length(name) } \
		END { for (i = 1; i <= n; i++) \
			if (colour) printf "  \033[36m%-*s\033[0m  %s\n", w, names[i], descs[i]; \
			else printf "  %-*s  %s\n", w, names[i], descs[i] }' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/scoring, bin/forecast and bin/yardstick-batch (version from git describe).
	@[[ -x bin/scoring && -x bin/forecast ]] || echo "Building bin/scoring and bin/forecast. The first build compiles every dependency (gRPC, protobuf, the gateway, gonum) and takes 2-4 minutes on 2 cores; later builds take seconds. Packages are listed as they compile." >&2
	go build -v -trimpath -ldflags "$(LDFLAGS)" -o bin/scoring github.com/yardstick-dev/yardstick/services/scoring/cmd/scoring
	go build -v -trimpath -ldflags "$(LDFLAGS)" -o bin/forecast github.com/yardstick-dev/yardstick/services/forecast/cmd/forecast
	go build -v -trimpath -o bin/yardstick-batch github.com/yardstick-dev/yardstick/cmd/yardstick-batch

.PHONY: run
run: build ## Run both services in dev mode on the embedded demo content (CONTENT=DIR: on that bundle); prints dev credentials.
	@# make's pid: run-dev.sh stops everything when make dies (even by kill -9) or is signalled alone.
	@RUN_DEV_PARENT=$$PPID CONTENT="$(CONTENT)" scripts/run-dev.sh

.PHONY: test
test: ## Run every test of the workspace (race detector on), then the allocation counts without it.
	go test -race -count=1 -timeout 30m $(PKGS)
	go test -count=1 -run 'Allocations|Hostile' github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire
	go test -count=1 -run 'TestBudgetCoversTheRealHandler' github.com/yardstick-dev/yardstick/services/forecast/internal/forecast
	go test -count=1 -run 'TestFrontHandlerAllocations' github.com/yardstick-dev/yardstick/services/scoring/internal/scoring
	cd tools && GOWORK=off go test -count=1 ./protoc-gen-yardstick-json/

# How long make fuzz runs each fuzz target (four of them: keep the total under 2 minutes).
FUZZTIME ?= 20s
# Go 1.26's fuzzing coordinator can race its own -fuzztime deadline and fail a target that found
# nothing ("context deadline exceeded", no crasher: golang/go#75804, fixed in Go 1.27). Only the
# fuzzing runs on 1.27; the go command takes that toolchain from the module proxy (76 MB, once).
FUZZ_GOTOOLCHAIN ?= go1.27.3

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (20s): the JSON decoder against protojson, its scanner against its tokenizer, the gRPC side's decoding (vtprotobuf's generated decoders) against protobuf-go, the JSON front end to end.
	GOTOOLCHAIN=$(FUZZ_GOTOOLCHAIN) go test -run '^$$' -fuzz '^FuzzUnmarshalJSON$$' -fuzztime $(FUZZTIME) github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire
	GOTOOLCHAIN=$(FUZZ_GOTOOLCHAIN) go test -run '^$$' -fuzz '^FuzzScanner$$' -fuzztime $(FUZZTIME) github.com/yardstick-dev/yardstick/pkg/serve/internal/jsonwire
	GOTOOLCHAIN=$(FUZZ_GOTOOLCHAIN) go test -run '^$$' -fuzz '^FuzzFront$$' -fuzztime $(FUZZTIME) github.com/yardstick-dev/yardstick/pkg/serve
	GOTOOLCHAIN=$(FUZZ_GOTOOLCHAIN) go test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) github.com/yardstick-dev/yardstick/pkg/serve/internal/grpcguard

.PHONY: cover
cover: ## Test with coverage and hold pkg/measure and pkg/token to the floor.
	@mkdir -p bin/cover
	@for m in $(COVERED); do \
		go test -count=1 -coverprofile=bin/cover/$$(basename $$m).out ./$$m/ >/dev/null; \
		pct=$$(go tool cover -func=bin/cover/$$(basename $$m).out | awk '/^total:/ {sub("%","",$$3); print $$3}'); \
		echo "$$m: $$pct% of statements (floor $(COVER_FLOOR)%)"; \
		awk -v p="$$pct" -v f="$(COVER_FLOOR)" 'BEGIN {exit !(p >= f)}' || { echo "$$m is below the coverage floor" >&2; exit 1; }; \
	done

.PHONY: bench
bench: ## Run the benchmarks (figures in docs/performance.md and each package's README).
	go test -run '^$$' -bench . -benchmem $(PKGS)

.PHONY: bench-e2e
bench-e2e: build ## JSON front vs a bare net/http handler: built binaries on core 0, load on core 1, median of 3 runs.
	go build -trimpath -o bin/bare github.com/yardstick-dev/yardstick/bench/bare
	go build -trimpath -o bin/baregrpc github.com/yardstick-dev/yardstick/bench/baregrpc
	go build -trimpath -o bin/bench-e2e github.com/yardstick-dev/yardstick/bench/e2e
	@if command -v taskset >/dev/null; then taskset -c 1 bin/bench-e2e -bin bin; else bin/bench-e2e -bin bin; fi

.PHONY: bench-batch
bench-batch: build ## Batches (issue 21): 1,000,000 scoring records and a 1,000,000-student group stream, as NDJSON and over gRPC, vs in-process loops; RSS growth, every answer checked.
	go build -trimpath -o bin/bench-batch github.com/yardstick-dev/yardstick/bench/batch
	@if command -v taskset >/dev/null; then taskset -c 1 bin/bench-batch -bin bin; else bin/bench-batch -bin bin; fi

# The commit before the tracing and operator-series instrumentation (issue 24): bench-tracing's A.
TRACING_REF ?= d38358b

.PHONY: bench-tracing
bench-tracing: build ## Tracing's cost, A/B in interleaved windows: this build (tracing off) against TRACING_REF's, then tracing on (every span exported) against off.
	go build -trimpath -o bin/bench-e2e github.com/yardstick-dev/yardstick/bench/e2e
	rm -rf bin/ref-src && git worktree prune && git worktree add --detach bin/ref-src $(TRACING_REF) >/dev/null
	(cd bin/ref-src && go build -trimpath -o ../ref/scoring github.com/yardstick-dev/yardstick/services/scoring/cmd/scoring)
	git worktree remove --force bin/ref-src
	@if command -v taskset >/dev/null; then taskset -c 1 bin/bench-e2e -bin bin -ab-bin bin/ref; else bin/bench-e2e -bin bin -ab-bin bin/ref; fi
	@if command -v taskset >/dev/null; then taskset -c 1 bin/bench-e2e -bin bin -ab-tracing; else bin/bench-e2e -bin bin -ab-tracing; fi

.PHONY: bench-limits
bench-limits: build ## Clients' limits' cost, A/B in interleaved windows: this build without limits against the same with a limit far above the load (JSON target: within 3%); then shared through a redis-server on loopback (reported).
	go build -trimpath -o bin/bench-e2e github.com/yardstick-dev/yardstick/bench/e2e
	@if command -v taskset >/dev/null; then taskset -c 1 bin/bench-e2e -bin bin -ab-limits; else bin/bench-e2e -bin bin -ab-limits; fi
	@command -v redis-server >/dev/null || { echo "bench-limits: redis-server is missing (apt-get install -y redis-server); the Redis A/B is skipped" >&2; exit 0; }; \
		dir=$$(mktemp -d); port=16379; redis-server --port $$port --bind 127.0.0.1 --save '' --appendonly no --dir $$dir >$$dir/log 2>&1 & pid=$$!; sleep 0.5; \
		if command -v taskset >/dev/null; then taskset -c 1 bin/bench-e2e -bin bin -ab-limits -ab-redis redis://127.0.0.1:$$port/0; else bin/bench-e2e -bin bin -ab-limits -ab-redis redis://127.0.0.1:$$port/0; fi; \
		status=$$?; kill $$pid; rm -rf $$dir; exit $$status

.PHONY: lint
lint: ## go vet, gofmt, go.mod tidiness and buf lint.
	go vet $(PKGS)
	@out=$$(gofmt -l $(GO_FILES)); if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do \
		(cd $$m && GOWORK=off go mod tidy -diff) || { echo "$$m: go.mod/go.sum not tidy (run: cd $$m && GOWORK=off go mod tidy)"; exit 1; }; \
	done
	@if [[ -f buf.yaml ]]; then $(MAKE) --no-print-directory tools >/dev/null && $(TOOLS)/buf lint && $(TOOLS)/buf format --diff --exit-code; fi

# The OpenAPI documents the services serve, and the linters they are held to.
OPENAPI_DOCS := proto/openapi/scoring.openapi.json proto/openapi/forecast.openapi.json

.PHONY: lint-openapi
lint-openapi: ## Lint the OpenAPI documents with Spectral (spectral:oas) and Redocly (recommended), pinned in tools/openapi-lint (npm ci): any error or warning fails.
	tools/openapi-lint/lint.sh $(OPENAPI_DOCS)

.PHONY: ts-client
ts-client: build ## The TypeScript client (clients/typescript): types current with the OpenAPI documents, type-check, build, its tests against bin/scoring and bin/forecast (npm ci of its lock).
	clients/typescript/ci.sh

.PHONY: ts-generate
ts-generate: ## Regenerate the TypeScript client's types from proto/openapi (after make generate changed a document).
	cd clients/typescript && { cmp -s package-lock.json node_modules/.installed-lock.json || npm ci --no-audit --no-fund --ignore-scripts --loglevel=error; } && npm run --silent generate

.PHONY: tools
tools: $(TOOLS)/.stamp ## Build the pinned code generators and buf into bin/tools.
$(TOOLS)/.stamp: tools/go.mod tools/go.sum $(wildcard tools/protoc-gen-yardstick-json/*.go)
	@echo "Building buf and the code generators into $(TOOLS) (pinned in tools/go.mod). The first time this compiles about 900 packages and takes 2-4 minutes on 2 cores; afterwards it is skipped until tools/go.mod changes. Packages are listed as they compile." >&2
	cd tools && GOWORK=off go build -v -o ../$(TOOLS)/ $(TOOL_PKGS)
	@touch $@

.PHONY: generate
generate: tools ## Regenerate Go, gateway and OpenAPI code from the .proto files (offline).
	find proto -name '*.pb.go' -o -name '*.pb.gw.go' -o -name '*.swagger.json' | xargs rm -f
	$(TOOLS)/buf format -w
	$(TOOLS)/buf generate
	go run ./proto/openapi/internal/gen -dir proto/openapi
	for s in scoring forecast; do $(TOOLS)/oapi-codegen -config e2e/client/$$s/oapi-codegen.yaml proto/openapi/$$s.openapi.json; done
	$(OPAQUE)/generate.sh
	$(THROWAWAY)/generate.sh

.PHONY: check-generate
check-generate: generate ## Regenerate, then fail if the committed generated code differs.
	@if [[ -n "$$(git status --porcelain -- proto buf.yaml buf.gen.yaml e2e/client $(OPAQUE) $(THROWAWAY))" ]]; then \
		git status --porcelain -- proto e2e/client $(OPAQUE) $(THROWAWAY); git --no-pager diff --stat -- proto e2e/client $(OPAQUE) $(THROWAWAY); \
		echo "generated code is stale: run 'make generate' and commit" >&2; exit 1; fi

.PHONY: breaking
breaking: tools ## Fail if the contract breaks wire or JSON compatibility with proto/baseline.binpb.
	$(TOOLS)/buf breaking --against proto/baseline.binpb

.PHONY: baseline
baseline: tools ## Record the current contract as the compatibility baseline (on release).
	$(TOOLS)/buf build -o proto/baseline.binpb

.PHONY: soak
soak: soak-logins soak-grpc soak-budget soak-sigterm soak-fair soak-attacks ## Long runs under hostile load (each under a minute); exit non-zero when a target is missed.

.PHONY: soak-logins
soak-logins: build ## Login flood: scoring p99 and correct logins while other clients fail 100 logins/s (pkg/token/README.md).
	go run ./bench/soak -bin bin/scoring

.PHONY: soak-grpc
soak-grpc: build ## gRPC memory: forecast's peak RSS under 20 concurrent token-less calls just under its receive limit (docs/operations.md, Limits and protection).
	go run ./bench/soak -scenario grpc-memory -bin bin/forecast

.PHONY: soak-budget
soak-budget: build ## Memory budget: 20 concurrent 100,000-student group forecasts; peak VmHWM, 503 with Retry-After (docs/operations.md, Memory budget).
	go run ./bench/soak -scenario budget -bin bin/forecast

.PHONY: soak-sigterm
soak-sigterm: build ## SIGTERM drain: connections opened during the drain delay, first request 0.1 s after the listener closed: 0 EOF.
	go run ./bench/soak -scenario sigterm -bin bin/scoring

.PHONY: soak-fair
soak-fair: build ## Fair share: a client flooding at 6x its rate beside a steady one (100% 200, p99 within 3x quiet); 10 group forecasts of a concurrency-2 client, 2 at a time, beside another's one (docs/operations.md, A fair share for every client).
	go run ./bench/soak -scenario fair -bin bin/forecast

.PHONY: soak-attacks
soak-attacks: build ## Issue 19's attacks as in a 512 MiB pod: readiness under a slot hog, peak VmHWM, JSON p99 and log lines under a rapid reset, a client removed past a named pipe, 429 after throttle churn (about 4 minutes; -only N runs one).
	go run ./bench/soak -scenario attacks -bin bin/scoring -forecast-bin bin/forecast

.PHONY: docs
docs: ## Rewrite docs/examples.md (and docs/plan.svg, docs/growth.svg) from the running services, and docs/content.md's worked example.
	scripts/examples.sh docs/examples.md
	scripts/content-example.sh docs/content.md

.PHONY: check-docs
check-docs: ## Fail if docs/examples.md (or the charts drawn from it, docs/plan.svg and docs/growth.svg) no longer matches what the services answer, or docs/content.md's worked example what the commands print.
	@mkdir -p bin/check-docs && scripts/examples.sh bin/check-docs/examples.md >/dev/null
	@diff -u docs/examples.md bin/check-docs/examples.md || { echo "docs/examples.md is stale: run 'make docs' and commit" >&2; exit 1; }
	@diff -u docs/plan.svg bin/check-docs/plan.svg || { echo "docs/plan.svg is stale: run 'make docs' and commit" >&2; exit 1; }
	@diff -u docs/growth.svg bin/check-docs/growth.svg || { echo "docs/growth.svg is stale: run 'make docs' and commit" >&2; exit 1; }
	@scripts/content-example.sh bin/check-docs/content.md >/dev/null
	@diff -u docs/content.md bin/check-docs/content.md || { echo "docs/content.md's worked example is stale: run 'make docs' and commit" >&2; exit 1; }

.PHONY: check-links
check-links: ## Fail if a relative link or #anchor in the repository's Markdown does not resolve.
	go run ./scripts/checklinks .

.PHONY: browser-test
browser-test: SCREENSHOT ?= bin/swagger-ui.png
browser-test: ## Drive GET /docs (Swagger UI) in headless Chromium against the scoring binary (SCREENSHOT=docs/swagger-ui.png refreshes the picture in README.md and docs/api.md), and the TypeScript client from a page on another origin (CORS).
	clients/typescript/ci.sh build
	go vet -tags browser ./e2e/browser/
	go test -tags browser -count=1 ./e2e/browser/ -args -screenshot=$(abspath $(SCREENSHOT))

.PHONY: ci
ci: lint check-generate lint-openapi breaking test fuzz browser-test ts-client cover check-docs check-links image-build-check deploy-score check-alerts soak ## What CI runs (bash .ci/run), in this order:
	@echo "make ci: all checks passed"

.PHONY: clean
clean: ## Remove build output.
	rm -rf bin

# Deployment targets (image, manifest checks) live beside the manifests.
-include deploy/deploy.mk
