#!/usr/bin/env bash
# Makes sure this machine has haproxy, for `make cluster` (the load balancer in front of the
# gateways). Uses HAPROXY_BIN or the one on PATH; otherwise installs Debian's package. The
# cluster starts its own haproxy with a generated config on loopback: the package's system
# service is neither needed nor touched.
set -euo pipefail
source "$(dirname "$0")/lib/debian-tool.sh"
ensure_debian_tool cluster haproxy haproxy HAPROXY_BIN -v /usr/sbin /usr/local/sbin
