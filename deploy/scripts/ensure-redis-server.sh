#!/usr/bin/env bash
# Makes sure this machine has a redis-server, for `make bench` (it runs the same workloads
# on BullMQ, which keeps its queues in Redis). Uses the one on PATH (or REDIS_SERVER_BIN);
# otherwise installs Debian's package with apt-get, through sudo when not root. The bench
# starts its own redis-server on a free loopback port: the package's system service is
# neither needed nor touched.
set -euo pipefail

say() { printf 'bench: %s\n' "$*"; }

if [[ -n "${REDIS_SERVER_BIN:-}" ]]; then
  [[ -f "$REDIS_SERVER_BIN" && -x "$REDIS_SERVER_BIN" ]] || { say "REDIS_SERVER_BIN=$REDIS_SERVER_BIN is not an executable file" >&2; exit 1; }
  say "redis-server at $REDIS_SERVER_BIN (REDIS_SERVER_BIN)"
  exit 0
fi

# Debian installs it in /usr/bin; /usr/sbin and /usr/local/bin cover other layouts and a PATH without them.
for candidate in "$(command -v redis-server || true)" /usr/bin/redis-server /usr/sbin/redis-server /usr/local/bin/redis-server; do
  if [[ -n "$candidate" && -f "$candidate" && -x "$candidate" ]]; then
    say "redis-server found at $candidate"
    exit 0
  fi
done

cannot() {
  say "redis-server is missing and cannot be installed here: $*" >&2
  say "install it yourself (Debian/Ubuntu: apt-get install -y redis-server), or set REDIS_SERVER_BIN to a redis-server binary" >&2
  exit 1
}

command -v apt-get >/dev/null 2>&1 || cannot "this system has no apt-get"
if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  cannot "not root, and sudo is missing or asks for a password"
fi

export DEBIAN_FRONTEND=noninteractive
say "installing redis-server from the Debian packages (apt-get install -y redis-server)"
if ! "${as_root[@]}" apt-get install -y redis-server; then
  say "apt-get install failed; refreshing the package lists (apt-get update) and trying again"
  "${as_root[@]}" apt-get update || cannot "apt-get update failed"
  "${as_root[@]}" apt-get install -y redis-server || cannot "apt-get install -y redis-server failed"
fi
installed="$(command -v redis-server || true)"
[[ -n "$installed" ]] || installed=/usr/bin/redis-server
[[ -x "$installed" ]] || cannot "the package installed, but no redis-server binary is on PATH or in /usr/bin"
say "redis-server installed at $installed ($("$installed" --version | head -n 1))"
