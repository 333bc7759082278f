#!/usr/bin/env bash
# Makes sure this machine has a Chromium for the portal's browser tests (playwright-core
# drives it headless; it never downloads a browser of its own). Uses CJS_CHROMIUM_BIN or
# the one on PATH; otherwise installs Debian's `chromium` package.
set -euo pipefail
source "$(dirname "$0")/lib/debian-tool.sh"
ensure_debian_tool setup chromium chromium CJS_CHROMIUM_BIN --version /usr/bin /usr/local/bin
