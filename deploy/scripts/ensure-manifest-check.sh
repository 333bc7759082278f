#!/usr/bin/env bash
# Makes sure this machine has manifest-check, the offline validator `make test` runs over
# the deployment files (deploy/tools/manifest-check: kustomize build + Kubernetes API
# types, compose-spec loading). It is built with Go from the Go module proxy into
# .tools/manifest-check/<hash of its sources>/, so a change to the tool builds it again.
#   ensure-manifest-check.sh          build it when missing
#   ensure-manifest-check.sh --path   print its path; fail, without building, when missing
# TOOLS_DIR (default: .tools) moves the tools elsewhere, e.g. to try a change.
set -euo pipefail

say() { printf 'setup: %s\n' "$*"; }
root="$(cd "$(dirname "$0")/../.." && pwd)"
source_dir="$root/deploy/tools/manifest-check"
tools_dir="${TOOLS_DIR:-$root/.tools}"
hash="$(cd "$source_dir" && cat go.mod go.sum $(ls ./*.go | sort) | sha256sum | cut -c1-12)"
target_dir="$tools_dir/manifest-check/$hash"
target="$target_dir/manifest-check"

if [[ "${1:-}" == "--path" ]]; then
  [[ -x "$target" ]] || { say "manifest-check is not built for these sources (expected ${target}); run make test-tools (or make test)" >&2; exit 1; }
  printf '%s\n' "$target"
  exit 0
fi

if [[ -x "$target" ]]; then
  say "manifest-check found at ${target#"$root"/}"
  exit 0
fi

# shellcheck source=lib/go-toolchain.sh
source "$root/deploy/scripts/lib/go-toolchain.sh"
if ! find_go; then
  say "manifest-check is missing, and building it needs Go (1.24 or newer) and the Go module proxy" >&2
  exit 1
fi

say "building manifest-check with $(go version | cut -d' ' -f3) into ${target_dir#"$root"/} (a minute or two, once)"
mkdir -p "$target_dir"
building="$(mktemp -d "$target_dir.XXXXXX")"
trap 'rm -rf "$building"' EXIT
(cd "$source_dir" && GOFLAGS="${GOFLAGS:-} -mod=readonly -buildvcs=false" go build -trimpath -o "$building/manifest-check" .)
mv "$building/manifest-check" "$target"
say "manifest-check installed at ${target#"$root"/}"
