#!/usr/bin/env bash
# Makes sure this machine has a nats-server binary, installing Debian's package when it
# has none. NATS_SERVER_BIN names a binary to use instead of searching for one.
set -euo pipefail

say() { printf 'setup: %s\n' "$*"; }

find_nats_server() {
  if [[ -n "${NATS_SERVER_BIN:-}" ]]; then
    [[ -f "$NATS_SERVER_BIN" && -x "$NATS_SERVER_BIN" ]] && printf '%s\n' "$NATS_SERVER_BIN"
    return
  fi
  local candidate
  for candidate in "$(command -v nats-server || true)" /usr/sbin/nats-server /usr/local/bin/nats-server; do
    if [[ -n "$candidate" && -f "$candidate" && -x "$candidate" ]]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

if bin="$(find_nats_server)"; then
  say "nats-server found at $bin ($("$bin" --version 2>&1 | head -n 1))"
  exit 0
fi
if [[ -n "${NATS_SERVER_BIN:-}" ]]; then
  say "NATS_SERVER_BIN=$NATS_SERVER_BIN is not an executable file" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  say "nats-server is missing and apt-get is not available: install nats-server 2.9 or newer yourself, or set NATS_URL to a server with JetStream" >&2
  exit 1
fi
as_root=()
if [[ "$(id -u)" -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    say "nats-server is missing; installing it needs root: run 'apt-get install nats-server' as root" >&2
    exit 1
  fi
  as_root=(sudo)
fi
apt_get() { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }

say "installing nats-server from Debian's packages (apt-get install -y nats-server)"
if ! apt_get install -y -q nats-server; then
  say "install failed; refreshing the package lists (apt-get update) and trying again"
  apt_get update -q
  apt_get install -y -q nats-server
fi

if ! bin="$(find_nats_server)"; then
  say "apt-get installed nats-server but no binary was found on PATH, /usr/sbin or /usr/local/bin" >&2
  exit 1
fi
say "nats-server installed at $bin ($("$bin" --version 2>&1 | head -n 1))"
