#!/bin/sh
# Starts the program named by SERVICE; any other name stops the container with exit code 2,
# the services' code for a configuration mistake.
set -eu
case "${SERVICE:-}" in
  gateway|scheduler|node-registry|log-relay|billing|webhooks|admin)
    exec node "/app/dist/services/$SERVICE/main.js" "$@" ;;
  agent)
    exec node /app/dist/clients/agent/main.js "$@" ;;
  *)
    echo "entrypoint: SERVICE must be one of gateway, scheduler, node-registry, log-relay, billing, webhooks, agent, admin (got '${SERVICE:-}')" >&2
    exit 2 ;;
esac
