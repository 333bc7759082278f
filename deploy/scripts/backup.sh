#!/usr/bin/env bash
# Backs up every JetStream stream of the service's NATS account (each KV bucket's KV_cjs_*
# stream, CJS_LOGS, CJS_METERING and the artifacts' OBJ_cjs_artifacts) into a new directory
# <parent>/cjs-<UTC time>, without consumers (the services make theirs again at start), then
# checks each stream's backup is complete. The backup holds the signing key and every
# session and password hash: it is written readable by its owner only; keep it as a secret.
# See docs/operations.md, "Backup, restore and upgrades".
#
# Usage: deploy/scripts/backup.sh <parent directory>
# The nats CLI (NATS_CLI, else `nats` on PATH) connects as it always does: NATS_URL,
# NATS_CREDS, NATS_CONTEXT and the rest of its own settings.
set -euo pipefail

say() { printf 'backup: %s\n' "$*"; }
[[ $# -eq 1 ]] || { say "usage: $0 <parent directory>" >&2; exit 2; }
parent="$1"
nats="${NATS_CLI:-nats}"
command -v "$nats" >/dev/null || { say "no nats CLI ($nats); set NATS_CLI or install it: go install github.com/nats-io/natscli/nats@latest" >&2; exit 2; }

umask 077
mkdir -p "$parent"
target="$parent/cjs-$(date -u +%Y%m%dT%H%M%SZ)"
[[ ! -e "$target" ]] || { say "$target exists already" >&2; exit 1; }

"$nats" backup account "$target" --force --no-consumers
[[ -d "$target/KV_cjs_jobs" ]] || { say "the backup in $target has no KV_cjs_jobs: is this the service's account?" >&2; exit 1; }
for stream in "$target"/*/; do
  checked="$("$nats" backup validate --no-progress "$stream" | tail -n 1)"
  say "$(basename "$stream"): $checked"
done
say "done: $target"
