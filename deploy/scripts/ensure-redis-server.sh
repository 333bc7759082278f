#!/usr/bin/env bash
# Makes sure this machine has a redis-server, for `make bench` (it runs the same workloads
# on BullMQ, which keeps its queues in Redis). Uses REDIS_SERVER_BIN or the one on PATH;
# otherwise installs Debian's package. The bench starts its own redis-server on a free
# loopback port: the package's system service is neither needed nor touched.
set -euo pipefail
source "$(dirname "$0")/lib/debian-tool.sh"
ensure_debian_tool bench redis-server redis-server REDIS_SERVER_BIN --version /usr/bin /usr/sbin /usr/local/bin
