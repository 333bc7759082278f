#!/usr/bin/env bash
# Makes sure this machine has haproxy, for `make cluster` (the load balancer in front of the
# gateways). Uses HAPROXY_BIN, or the one on PATH or in /usr/sbin; otherwise installs
# Debian's package with apt-get, through sudo when not root. The cluster starts its own
# haproxy with a generated config on loopback: the package's system service is neither
# needed nor touched.
set -euo pipefail

say() { printf 'cluster: %s\n' "$*"; }

if [[ -n "${HAPROXY_BIN:-}" ]]; then
  [[ -f "$HAPROXY_BIN" && -x "$HAPROXY_BIN" ]] || { say "HAPROXY_BIN=$HAPROXY_BIN is not an executable file" >&2; exit 1; }
  exit 0
fi

for candidate in "$(command -v haproxy || true)" /usr/sbin/haproxy /usr/local/sbin/haproxy; do
  if [[ -n "$candidate" && -f "$candidate" && -x "$candidate" ]]; then
    exit 0
  fi
done

cannot() {
  say "haproxy is missing and cannot be installed here: $*" >&2
  say "install it yourself (Debian/Ubuntu: apt-get install -y haproxy), or set HAPROXY_BIN to a haproxy binary" >&2
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
say "installing haproxy from the Debian packages (apt-get install -y haproxy)"
if ! "${as_root[@]}" apt-get install -y haproxy; then
  say "apt-get install failed; refreshing the package lists (apt-get update) and trying again"
  "${as_root[@]}" apt-get update || cannot "apt-get update failed"
  "${as_root[@]}" apt-get install -y haproxy || cannot "apt-get install -y haproxy failed"
fi
installed="$(command -v haproxy || true)"
[[ -n "$installed" ]] || installed=/usr/sbin/haproxy
[[ -x "$installed" ]] || cannot "the package installed, but no haproxy binary is on PATH or in /usr/sbin"
say "haproxy installed at $installed ($("$installed" -v | head -n 1))"
