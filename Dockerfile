# One image for every process of the service. SERVICE picks the program at build time
# (`--build-arg SERVICE=scheduler`) or at run time (`-e SERVICE=scheduler`): gateway,
# scheduler, node-registry, log-relay, billing, webhooks, agent or admin (the operator CLI).
# See docs/operations.md, "Deploying with containers".

# Build: every dependency, the TypeScript compiler, then dist/ and the portal's build.
FROM node:24-trixie-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY patches ./patches
# No install scripts of dependencies run; our own patches (patches/, patch-package) are applied by hand.
RUN npm ci --ignore-scripts --no-audit --no-fund && npx patch-package
COPY tsconfig.json tsconfig.build.json ./
COPY clients ./clients
COPY services ./services
COPY shared ./shared
RUN npm run build && npm run portal

# Runtime: production dependencies only, the compiled JavaScript, a non-root user.
FROM node:24-trixie-slim AS runtime
# tini as PID 1 reaps the processes an agent's jobs leave behind and forwards signals.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# Each package patched in patches/, as the build stage patched it (the install above runs no scripts).
COPY --from=build /src/node_modules/@nats-io/nats-core ./node_modules/@nats-io/nats-core
COPY --from=build /src/node_modules/@pinojs/redact ./node_modules/@pinojs/redact
COPY --from=build /src/dist ./dist
# The portal's build, served by the gateway at / (CJS_PORTAL_DIR, relative to /app).
COPY --from=build /src/clients/portal/dist ./clients/portal/dist
COPY deploy/docker/entrypoint.sh deploy/docker/healthcheck.mjs ./deploy/docker/
# The agent's state file and job workspaces; mount a volume here to keep the node across restarts.
RUN mkdir -p /var/lib/cjs-agent && chown node:node /var/lib/cjs-agent
ARG SERVICE=gateway
ENV SERVICE=${SERVICE} \
    CJS_WORK_DIR=/var/lib/cjs-agent
# The node image's unprivileged user (uid 1000).
USER node
EXPOSE 8080 9100 9101 9102 9103 9104
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "/app/deploy/docker/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "--", "/app/deploy/docker/entrypoint.sh"]
