#!/bin/sh
# Starts the program named by SERVICE; any other name stops the container with exit code 2,
# the services' code for a configuration mistake.
set -eu
case "${SERVICE:-}" in
  gateway)
    # The gateway's V8 flags: shared/runtime/node-flags.ts says which and why; a test holds this copy to it.
    exec node --initial-old-space-size=256 "/app/dist/services/$SERVICE/main.js" "$@" ;;
  scheduler|node-registry|log-relay|billing|webhooks|admin)
    exec node "/app/dist/services/$SERVICE/main.js" "$@" ;;
  agent)
    exec node /app/dist/clients/agent/main.js "$@" ;;
  *)
    echo "entrypoint: SERVICE must be one of gateway, scheduler, node-registry, log-relay, billing, webhooks, agent, admin (got '${SERVICE:-}')" >&2
    exit 2 ;;
esac
