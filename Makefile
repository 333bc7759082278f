# Entry points for developers and CI. `make test` on a fresh clone installs what is missing.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c

.PHONY: setup test-tools node node-deps nats-server schemathesis contract-test chromium portal manifest-check promtool dev test check build lint format bench cluster cluster-stop cluster-clean chaos clean

# The Node.js LTS pinned in .nvmrc, fetched into .tools/ by `make node` when the machine's is
# older: first on PATH for every recipe, so npm, npx, vitest, tsx and the processes the tests
# spawn (process.execPath) all run on it.
NODE_VERSION := $(shell tr -d '[:space:]v' < .nvmrc)
export PATH := $(CURDIR)/.tools/node/$(NODE_VERSION)/bin:$(PATH)

setup: node node-deps nats-server chromium portal

# Tools only the tests need (validators of the deploy files, the OpenAPI fuzzer); `make dev` does not wait for them.
test-tools: manifest-check promtool schemathesis

node:
	@deploy/scripts/ensure-node.sh

# npm writes node_modules/.package-lock.json on every install: older than the lockfile, or
# than a patch of patches/ (applied by the install), means the installed tree is stale.
node-deps: node
	@if [ ! -f package-lock.json ]; then \
	  echo "setup: no package-lock.json; running npm install"; \
	  npm install; \
	elif [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
	  || [ -n "$$(find patches -newer node_modules/.package-lock.json 2>/dev/null)" ]; then \
	  echo "setup: node_modules is missing or older than package-lock.json or patches/; running npm ci"; \
	  npm ci; \
	else \
	  echo "setup: node_modules is up to date"; \
	fi

nats-server:
	@deploy/scripts/ensure-nats-server.sh

# The browser the portal's tests drive (playwright-core, headless): Debian's package when missing.
chromium:
	@deploy/scripts/ensure-chromium.sh

# The web portal (docs/portal.md): `vite build` into clients/portal/dist, which the gateway
# serves at /. Rebuilt only when a source it bundles (its own, the SDK, the contract) or the
# lockfile is newer than the build, or the build is missing.
PORTAL_SOURCES := $(shell find clients/portal/src clients/sdk/src shared/contract -type f) clients/portal/index.html clients/portal/vite.config.ts package-lock.json
portal: clients/portal/dist/index.html
clients/portal/dist/index.html: $(PORTAL_SOURCES) | node-deps
	npm run portal

# The offline validator of deploy/ that `make test` runs (docs/operations.md, "Deploying with containers").
manifest-check:
	@deploy/scripts/ensure-manifest-check.sh
# The alert rules' test runs `promtool check rules` and `promtool test rules`.
promtool:
	@deploy/scripts/ensure-promtool.sh

dev: setup
	npm run dev

# The contract test runs inside the suite (test/contract/schemathesis.test.ts), beside the other files.
test: setup test-tools
	npx vitest run

# schemathesis (PyPI, pinned in test/contract/schemathesis-version) in a virtualenv under .tools/.
schemathesis:
	@deploy/scripts/ensure-schemathesis.sh

# The OpenAPI document against the running service: schemathesis with every check on a
# `make dev` stack of its own (ports CONTRACT_PORT, default 18480, to +2), a CI-sized budget
# (CONTRACT_MAX_EXAMPLES per operation signed in, default 25, CONTRACT_KEY_MAX_EXAMPLES with
# an API key, default 10; about two minutes). The answers
# the API gives on purpose that the document cannot state are in test/contract/schemathesis.toml.
contract-test: setup schemathesis
	deploy/scripts/contract-test.sh

build: node-deps portal
	npm run build

# The format (Biome), the types (tsc) and the lint rules (ESLint).
lint: node-deps
	npm run lint

format: node-deps
	npm run format

# The inner loop, about a minute: lint and the unit tests beside the code (no test/ folder,
# so no cluster, no browser, no spawned services). Vitest's filters match any part of a
# path: each ends with a slash, and deploy's names its folder of tests (a bare `deploy` also
# ran test/deploy, whose validators only `make test-tools` builds: a fresh checkout failed).
check: lint
	npx vitest run shared/ services/ clients/ deploy/local-cluster/

# Ours against BullMQ, side by side (docs/benchmarks.md). Quick by default (8 to 11 minutes
# on 2 cores); `make bench BENCH_ARGS=--full` for the long run. BullMQ needs a redis-server:
# installed from Debian's packages when missing.
BENCH_ARGS ?= --quick
bench: node-deps nats-server
	@deploy/scripts/ensure-redis-server.sh
	npx tsx test/bench/main.ts $(BENCH_ARGS)

# A production-shaped cluster on this machine, in the background (docs/operations.md): 3
# nats-servers, 6 services × 2 replicas, haproxy in front of the gateways, 2 agents.
# State and logs in CLUSTER_DIR; ports CLUSTER_BASE_PORT to +89. haproxy is installed from
# Debian's packages when missing.
CLUSTER_DIR ?= .data/cluster
CLUSTER_BASE_PORT ?= 18000
CLUSTER_FLAGS = --dir $(CLUSTER_DIR) --base-port $(CLUSTER_BASE_PORT)
cluster: setup
	@deploy/scripts/ensure-haproxy.sh
	npx tsx deploy/local-cluster/main.ts start $(CLUSTER_FLAGS)

cluster-stop: node-deps
	npx tsx deploy/local-cluster/main.ts stop $(CLUSTER_FLAGS)

cluster-clean: node-deps
	npx tsx deploy/local-cluster/main.ts clean $(CLUSTER_FLAGS)

# The soak: jobs stream through the load balancer while each process kind is killed with
# SIGKILL and restarted; fails on a lost, doubled or wrongly charged job. Starts the
# cluster when it is not running. CHAOS_SECONDS (default 180) or CHAOS_ARGS=--quick (75 s).
CHAOS_SECONDS ?=
CHAOS_ARGS ?=
chaos: setup
	@deploy/scripts/ensure-haproxy.sh
	npx tsx deploy/local-cluster/chaos/main.ts $(CLUSTER_FLAGS) $(if $(CHAOS_SECONDS),--seconds $(CHAOS_SECONDS)) $(CHAOS_ARGS)

clean:
	rm -rf dist .data clients/portal/dist clients/sdk/dist
