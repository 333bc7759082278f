#!/usr/bin/env bash
# Makes sure this machine has promtool, for the test that checks and unit-tests the alert
# rules (deploy/prometheus/alerts.yml, test/lint/alert-rules.test.ts). Uses the one on PATH;
# otherwise installs Debian's `prometheus` package (which ships promtool) with apt-get,
# through sudo when not root. Only promtool is wanted: a Prometheus server the package
# starts is stopped and disabled again.
set -euo pipefail

say() { printf 'setup: %s\n' "$*"; }

# Debian installs it in /usr/bin; /usr/local/bin covers a hand-installed release and a PATH without it.
for candidate in "$(command -v promtool || true)" /usr/bin/promtool /usr/local/bin/promtool; do
  if [[ -n "$candidate" && -f "$candidate" && -x "$candidate" ]]; then
    say "promtool found at $candidate"
    exit 0
  fi
done

cannot() {
  say "promtool is missing and cannot be installed here: $*" >&2
  say "install it yourself (Debian/Ubuntu: apt-get install -y prometheus; or promtool from a Prometheus release on PATH)" >&2
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
install=(apt-get install -y --no-install-recommends prometheus)
say "installing promtool from the Debian packages (${install[*]})"
if ! "${as_root[@]}" "${install[@]}"; then
  say "apt-get install failed; refreshing the package lists (apt-get update) and trying again"
  "${as_root[@]}" apt-get update || cannot "apt-get update failed"
  "${as_root[@]}" "${install[@]}" || cannot "${install[*]} failed"
fi
# The package enables a Prometheus server; the tests need none.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
  say "stopping and disabling the prometheus service the package started (only promtool is needed)"
  "${as_root[@]}" systemctl disable --now prometheus || say "could not stop the prometheus service; stop it yourself if you do not want it"
fi
installed="$(command -v promtool || true)"
[[ -n "$installed" ]] || installed=/usr/bin/promtool
[[ -x "$installed" ]] || cannot "the package installed, but no promtool binary is on PATH or in /usr/bin"
say "promtool installed at $installed ($("$installed" --version 2>&1 | head -n 1))"
