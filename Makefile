# Entry points for developers and CI. `make test` on a fresh clone installs what is missing.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c

.PHONY: setup test-tools node-deps nats-server manifest-check promtool dev test build lint bench clean

setup: node-deps nats-server

# Tools only the tests need (validators of the deploy files); `make dev` does not wait for them.
test-tools: manifest-check promtool

# npm writes node_modules/.package-lock.json on every install: older than the lockfile
# means the installed tree is stale.
node-deps:
	@if [ ! -f package-lock.json ]; then \
	  echo "setup: no package-lock.json; running npm install"; \
	  npm install; \
	elif [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then \
	  echo "setup: node_modules is missing or older than package-lock.json; running npm ci"; \
	  npm ci; \
	else \
	  echo "setup: node_modules is up to date"; \
	fi

nats-server:
	@deploy/scripts/ensure-nats-server.sh

# The offline validator of deploy/ that `make test` runs (docs/operations.md, "Deploying with containers").
manifest-check:
	@deploy/scripts/ensure-manifest-check.sh
# The alert rules' test runs `promtool check rules` and `promtool test rules`.
promtool:
	@deploy/scripts/ensure-promtool.sh

dev: setup
	npm run dev

test: setup test-tools
	npx vitest run

build: node-deps
	npm run build

lint: node-deps
	npm run lint

# Ours against BullMQ, side by side (docs/benchmarks.md). Quick by default (5 to 8 minutes
# on 2 cores); `make bench BENCH_ARGS=--full` for the long run. BullMQ needs a redis-server:
# installed from Debian's packages when missing.
BENCH_ARGS ?= --quick
bench: node-deps nats-server
	@deploy/scripts/ensure-redis-server.sh
	npx tsx test/bench/main.ts $(BENCH_ARGS)

clean:
	rm -rf dist .data
