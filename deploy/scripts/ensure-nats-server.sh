#!/usr/bin/env bash
# Makes sure this machine has a nats-server the project supports. The versions are pinned in
# shared/nats-server/versions.json: "pinned" is the release built here, "minimum" the oldest
# one the services run on. Order: NATS_SERVER_BIN if set (it must be recent enough), the
# pinned build in .tools/, a recent enough nats-server on PATH; otherwise the pinned release
# is built from the Go module proxy with `go install` into .tools/ (about a minute).
set -euo pipefail

say() { printf 'setup: %s\n' "$*"; }
root="$(cd "$(dirname "$0")/../.." && pwd)"
versions="$root/shared/nats-server/versions.json"
read_version() { sed -n "s/.*\"$1\": *\"\([0-9][0-9.]*\)\".*/\1/p" "$versions"; }
pinned="$(read_version pinned)"
minimum="$(read_version minimum)"
[[ -n "$pinned" && -n "$minimum" ]] || { say "cannot read the pinned and minimum versions from $versions" >&2; exit 1; }
target_dir="$root/.tools/nats-server/$pinned"
target="$target_dir/nats-server"

# The version a binary reports, as 2.15.2; empty when it does not run.
version_of() { "$1" --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true; }
# True when version $1 is at least the minimum.
recent_enough() { [[ -n "$1" && "$(printf '%s\n%s\n' "$minimum" "$1" | sort -V | head -n 1)" == "$minimum" ]]; }

if [[ -n "${NATS_SERVER_BIN:-}" ]]; then
  [[ -f "$NATS_SERVER_BIN" && -x "$NATS_SERVER_BIN" ]] || { say "NATS_SERVER_BIN=$NATS_SERVER_BIN is not an executable file" >&2; exit 1; }
  found="$(version_of "$NATS_SERVER_BIN")"
  recent_enough "$found" || { say "NATS_SERVER_BIN=$NATS_SERVER_BIN is nats-server ${found:-of unknown version}; the project needs $minimum or newer (unset it to build $pinned)" >&2; exit 1; }
  say "nats-server $found at $NATS_SERVER_BIN (NATS_SERVER_BIN)"
  exit 0
fi

if [[ -x "$target" ]]; then
  say "nats-server $pinned found at ${target#"$root"/}"
  exit 0
fi

for candidate in "$(command -v nats-server || true)" /usr/sbin/nats-server /usr/local/bin/nats-server; do
  [[ -n "$candidate" && -f "$candidate" && -x "$candidate" ]] || continue
  found="$(version_of "$candidate")"
  if recent_enough "$found"; then
    say "nats-server $found found at $candidate"
    exit 0
  fi
  say "ignoring nats-server ${found:-of unknown version} at $candidate: older than $minimum, the oldest supported"
done

# shellcheck source=lib/go-toolchain.sh
source "$root/deploy/scripts/lib/go-toolchain.sh"
if ! find_go; then
  say "nats-server $minimum or newer is missing, and building it needs Go (1.24 or newer): install Go, or set NATS_SERVER_BIN to a nats-server $minimum+ binary, or NATS_URL to a running server" >&2
  exit 1
fi

say "building nats-server $pinned with $(go version | cut -d' ' -f3) (go install github.com/nats-io/nats-server/v2@v$pinned); this takes about a minute"
mkdir -p "$target_dir"
building="$(mktemp -d "$target_dir.XXXXXX")"
trap 'rm -rf "$building"' EXIT
GOBIN="$building" GOFLAGS="${GOFLAGS:-} -buildvcs=false" go install "github.com/nats-io/nats-server/v2@v$pinned"
mv "$building/nats-server" "$target"
built="$(version_of "$target")"
[[ "$built" == "$pinned" ]] || { say "the build at $target reports version '${built}', expected $pinned" >&2; rm -f "$target"; exit 1; }
say "nats-server $pinned installed at ${target#"$root"/}"
