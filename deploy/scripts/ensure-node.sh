#!/usr/bin/env bash
# Makes sure the project runs on a supported Node.js LTS. The version is pinned in .nvmrc.
# Order: the pinned build in .tools/node/<version>/; a `node` on PATH of the pinned major or
# newer; otherwise the official binary of the pinned version is taken from the npm registry
# (the package node-<os>-<arch>, the one the npm package `node` installs) into
# .tools/node/<version>/bin. The Makefile puts that directory first on PATH, so every make
# target, the tests and the processes they spawn (process.execPath) run on it.
set -euo pipefail

say() { printf 'setup: %s\n' "$*"; }
root="$(cd "$(dirname "$0")/../.." && pwd)"
pinned="$(tr -d '[:space:]v' <"$root/.nvmrc")"
[[ "$pinned" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { say "cannot read the pinned Node.js version from .nvmrc" >&2; exit 1; }
major="${pinned%%.*}"
target_dir="$root/.tools/node/$pinned"
target="$target_dir/bin/node"

if [[ -x "$target" ]]; then
  say "node $pinned found at ${target#"$root"/}"
  exit 0
fi

found="$(node --version 2>/dev/null || true)"
found="${found#v}"
if [[ -n "$found" && "${found%%.*}" -ge "$major" ]]; then
  say "node $found found at $(command -v node)"
  exit 0
fi
say "node ${found:-(none)} on PATH is older than Node.js $major, the LTS the project runs on; fetching node $pinned"

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) say "no Node.js package for $(uname -s): install Node.js $major yourself" >&2; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) say "no Node.js package for $(uname -m): install Node.js $major yourself" >&2; exit 1 ;;
esac
package="node-$os-$arch@$pinned"
command -v npm >/dev/null 2>&1 || { say "npm is needed to fetch $package: install Node.js $major with npm" >&2; exit 1; }

mkdir -p "$root/.tools/node"
fetching="$(mktemp -d "$target_dir.XXXXXX")"
trap 'rm -rf "$fetching"' EXIT
# npm checks the tarball against the registry's integrity hash.
(cd "$fetching" && npm pack --silent "$package" >/dev/null)
tar -xzf "$fetching"/*.tgz -C "$fetching" package/bin/node package/LICENSE
mkdir -p "$fetching/out/bin"
mv "$fetching/package/bin/node" "$fetching/out/bin/node"
mv "$fetching/package/LICENSE" "$fetching/out/LICENSE"
got="$("$fetching/out/bin/node" --version)"
[[ "$got" == "v$pinned" ]] || { say "the fetched binary reports $got, expected v$pinned" >&2; exit 1; }
rm -rf "$target_dir"
mv "$fetching/out" "$target_dir"
say "node $pinned installed at ${target#"$root"/}"
