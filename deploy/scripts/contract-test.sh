#!/usr/bin/env bash
# `make contract-test`: schemathesis against the OpenAPI document of a running `make dev`
# stack (its own ports and a fresh data dir, stopped at the end), with every check on and a
# budget that fits CI. Exits non-zero on any failure schemathesis reports. The failures the
# API answers on purpose are listed, with why, in test/contract/schemathesis.toml.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
version="$(tr -d '[:space:]' <test/contract/schemathesis-version)"
st="$root/.tools/schemathesis/$version/bin/st"
[[ -x "$st" ]] || {
  printf 'contract-test: schemathesis %s is not installed in .tools/: run `make schemathesis` (make test does)\n' "$version" >&2
  exit 1
}
port="${CONTRACT_PORT:-18480}"
ops_port="${CONTRACT_OPS_PORT:-18481}"
base="http://127.0.0.1:$port"
data="$(mktemp -d "${TMPDIR:-/tmp}/cjs-contract.XXXXXX")"
password="contract-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
say() { printf 'contract-test: %s\n' "$*"; }

CJS_PORT="$port" CJS_OPS_PORT="$ops_port" CJS_NATS_PORT="${CONTRACT_NATS_PORT:-18482}" \
  CJS_DATA_DIR="$data" CJS_ADMIN_PASSWORD="$password" LOG_LEVEL=warn \
  CJS_RATE_LIMIT_PER_SECOND=1000000 CJS_RATE_LIMIT_PER_MINUTE=10000000 CJS_RATE_LIMIT_PER_HOUR=600000000 CJS_ACCESS_TOKEN_TTL_SECONDS=3600 \
  setsid npx tsx services/dev/main.ts >"$data/dev.log" 2>&1 &
dev=$!
stop() {
  kill -TERM -- "-$dev" 2>/dev/null || true
  wait "$dev" 2>/dev/null || true
  rm -rf "$data"
}
trap stop EXIT

say "starting the service (make dev) on $base"
token=""
# Ready (every service's /readyz) and the admin made: a sign-in answers a token.
for _ in $(seq 1 120); do
  kill -0 "$dev" 2>/dev/null || { cat "$data/dev.log" >&2; say "the service did not start" >&2; exit 1; }
  if curl -sf "http://127.0.0.1:$ops_port/readyz" >/dev/null 2>&1; then
    token="$(curl -s -X POST "$base/api/auth/LOGIN_EMAIL" -H 'X-App-ID: local' -H 'Content-Type: application/json' \
      -d "{\"email\":\"admin@localhost\",\"password\":\"$password\"}" | sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p' || true)"
    [[ -n "$token" ]] && break
  fi
  sleep 1
done
[[ -n "$token" ]] || { tail -50 "$data/dev.log" >&2; say "the service was not ready, or the admin could not sign in, in 2 minutes" >&2; exit 1; }

# An API key of the admin, with every scope: the credential integrators call with.
key="$(curl -s -X POST "$base/api/compute/api-keys/create" -H 'X-App-ID: local' -H "Authorization: Bearer $token" \
  -H 'Content-Type: application/json' -d '{"name":"contract-test"}' | sed -n 's/.*"key":"\([^"]*\)".*/\1/p' || true)"
[[ -n "$key" ]] || { say "could not mint an API key" >&2; exit 1; }

# Run from the scratch directory: schemathesis keeps its cache in the working directory.
cd "$data"
# One worker: with two, Hypothesis parsed lambda sources from two threads at once and a pass
# ended in Python's "AST constructor recursion depth mismatch", a runtime error of the tool
# that says nothing of the API (seen once in four runs on CPython 3.11).
# Each pass's full report goes to a file
# (CONTRACT_REPORT_DIR, default $TMPDIR/cjs-contract-reports)
# and is printed whole only when the pass fails: its pytest-style closing banner ("3 warnings
# in 55s") would otherwise end `make test`'s output and read as a run of no tests.
reports="${CONTRACT_REPORT_DIR:-${TMPDIR:-/tmp}/cjs-contract-reports}"
mkdir -p "$reports"
fuzz() {
  local name="$1"
  shift
  local report="$reports/schemathesis-$name.txt"
  if "$st" --config-file "$root/test/contract/schemathesis.toml" run "$base/openapi.json" \
    --checks all -H "X-App-ID: local" "$@" --workers 1 --seed "${CONTRACT_SEED:-26}" --output-truncate true \
    >"$report" 2>&1; then
    say "$name pass: $(grep -E '^ *[0-9]+ generated' "$report" | sed 's/^ *//') (warnings and phases: $report)"
  else
    cat "$report" >&2
    say "$name pass failed (report above)" >&2
    exit 1
  fi
}
say "schemathesis $version, every check, with a session (Authorization: Bearer), against $base/openapi.json"
fuzz session -H "Authorization: Bearer $token" --max-examples "${CONTRACT_MAX_EXAMPLES:-25}"
say "schemathesis $version, every check, with an API key (X-API-Key), but the session-only operations"
# Those take no key (403 auth.jwt_required): see the end of test/contract/schemathesis.toml.
fuzz api-key -H "X-API-Key: $key" --max-examples "${CONTRACT_KEY_MAX_EXAMPLES:-10}" \
  --exclude-name-regex '^POST /api/compute/(account/password/change|api-keys/(create|update)|jobs/artifacts/presign-(upload|download)|billing/checkout/create)$'

