#!/usr/bin/env bash
# Makes sure this machine has promtool, for the test that checks and unit-tests the alert
# rules (deploy/prometheus/alerts.yml, test/lint/alert-rules.test.ts). Uses the one on
# PATH; otherwise installs Debian's `prometheus` package, which ships it. Only promtool is
# wanted: a Prometheus server the package starts is stopped and disabled again.
set -euo pipefail
source "$(dirname "$0")/lib/debian-tool.sh"
ensure_debian_tool setup promtool prometheus "" --version /usr/bin /usr/local/bin
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
  echo "setup: stopping and disabling the prometheus service the package started (only promtool is needed)"
  systemctl disable --now prometheus || echo "setup: could not stop the prometheus service; stop it yourself if you do not want it"
fi
