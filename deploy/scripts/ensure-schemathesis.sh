#!/usr/bin/env bash
# Makes sure schemathesis (the OpenAPI fuzzer `make contract-test` runs) is installed: the
# pinned release from PyPI in a virtual environment under .tools/, made with the machine's
# python3 (3.10 or newer). Prints nothing but its progress; the binary is
# .tools/schemathesis/<version>/bin/st.
set -euo pipefail

say() { printf 'setup: %s\n' "$*"; }
root="$(cd "$(dirname "$0")/../.." && pwd)"
version="$(tr -d '[:space:]' <"$root/test/contract/schemathesis-version")"
venv="$root/.tools/schemathesis/$version"

if [[ -x "$venv/bin/st" ]] && "$venv/bin/st" --version 2>/dev/null | grep -q "$version"; then
  say "schemathesis $version found at ${venv#"$root"/}"
  exit 0
fi
command -v python3 >/dev/null 2>&1 || { say "python3 (3.10 or newer) is needed to install schemathesis" >&2; exit 1; }
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "python3 has no venv module: installing Debian's python3-venv"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv ||
      { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv; }
  fi
  python3 -c 'import venv, ensurepip' 2>/dev/null ||
    { say "python3 has no venv module: install it (Debian: apt-get install -y python3-venv)" >&2; exit 1; }
fi
say "installing schemathesis $version from PyPI into ${venv#"$root"/}"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
say "schemathesis $version installed"
