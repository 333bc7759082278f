import { setMaxListeners } from "node:events";
import type { NatsConnection } from "@nats-io/transport-node";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { queueGroups } from "../../shared/nats/index.js";
import { type ServiceRun, serviceLifecycle } from "../../shared/process/index.js";
import { natsConnected, readiness, type Clock, type ReadinessCheck, type Service } from "../../shared/runtime/index.js";
import { createApp } from "./admin/create-app.js";
import { createBusiness } from "./admin/create-business.js";
import { changeUserOfApp, setRoleOfUser } from "./admin/change-user.js";
import { createUser } from "./admin/create-user.js";
import { listUsersOfApp } from "./admin/list-users.js";
import { rotateKeys } from "./admin/rotate-keys.js";
import { buildApp } from "./app.js";
import { ArtifactBudget } from "./artifacts/artifact-budget.js";
import { ArtifactStore } from "./artifacts/artifact-store.js";
import { purgeJobArtifacts } from "./artifacts/purge-job-artifacts.js";
import type { GatewayConfig } from "./config.js";
import type { GatewayContext, OtpSender } from "./gateway-context.js";
import { createTokenIssuer } from "./identity/access-tokens.js";
import { Authenticator } from "./identity/authenticator.js";
import { openIdentityStore } from "./identity/identity-store.js";
import { indexUsersOfBusinesses } from "./identity/users.js";
import { LoginGuard } from "./identity/login-guard.js";
import { OneTimeCodes } from "./identity/otp.js";
import { Sessions } from "./identity/sessions.js";
import { urlSigner } from "./http/signed-url.js";
import { buildNodeNats } from "./node-nats/node-nats.js";
import { otpSenderFromConfig } from "./otp-sender.js";
import { IdempotencyStore } from "./idempotency/idempotency-store.js";
import { NodeCallBudget } from "./rate-limit/node-calls.js";
import { RateLimiter } from "./rate-limit/rate-limiter.js";
import { configuredKeySets, type ConfiguredKeySets } from "./secrets/key-sources.js";
import { openSigningKeys } from "./secrets/signing-keys.js";
import { nodePlaneHandlers } from "./rpc/node-plane.js";

/**
 * How long the HTTP requests in flight at stop may take to finish; any still open then
 * have their connections closed. Long polls end at once at stop, so this bounds the other
 * calls, within the process's 15 s shutdown limit and with room for the NATS drain after.
 */
export const HTTP_DRAIN_MS = 10_000;

export interface GatewayDeps {
  nc: NatsConnection;
  logger: Logger;
  clock: Clock;
  config: Readonly<GatewayConfig>;
  /** Replaces the configured one-time-code delivery (tests read codes this way). */
  sendOtp?: OtpSender;
  /** The signing keys the settings give, read by main before it connects; read here when absent. */
  keySets?: ConfiguredKeySets;
  /** More `/readyz` checks, from the process that runs the gateway (its JetStream probe). */
  readinessChecks?: Record<string, ReadinessCheck>;
}

export interface Gateway extends Service {
  /** The HTTP edge, ready for `listen` (main) or `inject` (tests). */
  readonly app: FastifyInstance;
}

/** The gateway's stores, keys and helpers, every one provisioned: what its handlers share. */
async function openGatewayContext(deps: GatewayDeps): Promise<GatewayContext> {
  const { nc, logger, clock, config } = deps;
  const topology = { replicas: config.CJS_NATS_REPLICAS, logger };
  const store = await openIdentityStore(nc, topology);
  const signingKeys = await openSigningKeys(store, deps.keySets ?? configuredKeySets(config), {
    clock,
    logger,
    reloadIntervalMs: config.CJS_SIGNING_KEYS_RELOAD_MS,
  });
  const tokens = createTokenIssuer(signingKeys.jwt.live, {
    issuer: config.CJS_JWT_ISSUER,
    audience: config.CJS_JWT_AUDIENCE,
    ttlSeconds: config.CJS_ACCESS_TOKEN_TTL_SECONDS,
    clock,
  });
  const artifacts = await ArtifactStore.open(nc, topology, config.CJS_ARTIFACT_STORE_MAX_BYTES);
  return {
    config,
    nc,
    logger,
    clock,
    store,
    tokens,
    sessions: new Sessions(
      store.sessions,
      clock,
      config.CJS_REFRESH_TOKEN_TTL_SECONDS,
      config.CJS_REFRESH_REUSE_GRACE_SECONDS,
    ),
    guard: new LoginGuard(store.loginGuards, clock),
    otps: new OneTimeCodes(store.otpCodes, clock),
    authenticator: new Authenticator({
      nc,
      store,
      tokens,
      clock,
      logger,
      cacheMaxAgeMs: config.CJS_IDENTITY_CACHE_MAX_AGE_SECONDS * 1000,
    }),
    signingKeys,
    urls: urlSigner(signingKeys.url.live, clock),
    artifacts,
    artifactBudget: new ArtifactBudget({ nc, artifacts, clock, logger }),
    rateLimiter: await RateLimiter.open(nc, {
      replicas: config.CJS_NATS_REPLICAS,
      policy: {
        second: config.CJS_RATE_LIMIT_PER_SECOND,
        minute: config.CJS_RATE_LIMIT_PER_MINUTE,
        hour: config.CJS_RATE_LIMIT_PER_HOUR,
      },
      clock,
      logger,
    }),
    nodeCalls: new NodeCallBudget({
      perSecond: config.CJS_NODE_RATE_LIMIT_PER_SECOND,
      controlPerSecond: config.CJS_NODE_CONTROL_RATE_LIMIT_PER_SECOND,
    }),
    idempotency: await IdempotencyStore.open(nc, topology),
    sendOtp: deps.sendOtp ?? otpSenderFromConfig(config),
  };
}

/** The operator commands (the admin CLI's) and the artifacts' purge, which the scheduler asks of the gateway, their owner. */
function serveGatewayRpcs(run: ServiceRun, gw: GatewayContext): void {
  run.serve("adminAppCreate", createApp(gw));
  run.serve("adminBusinessCreate", createBusiness(gw));
  run.serve("adminUserCreate", createUser(gw));
  run.serve("adminKeysRotate", rotateKeys(gw));
  run.serve("adminUserList", listUsersOfApp(gw));
  run.serve("adminUserDisable", changeUserOfApp(gw, "disable"));
  run.serve("adminUserEnable", changeUserOfApp(gw, "enable"));
  run.serve("adminUserSetRole", setRoleOfUser(gw));
  run.serve("artifactsPurge", purgeJobArtifacts(gw.artifacts));
}

/**
 * The gateway: the HTTP edge and identity (apps, businesses, users, sign-in, API keys).
 * It provisions its KV buckets and signing key while building, so `app` can serve as soon
 * as `start` has subscribed to the operator commands and the cache-invalidation watches.
 */
export async function buildGateway(deps: GatewayDeps): Promise<Gateway> {
  const { nc, logger } = deps;
  const gw = await openGatewayContext(deps);
  const connected = natsConnected(nc);
  const stopping = new AbortController();
  // Every long poll in progress listens to it.
  setMaxListeners(0, stopping.signal);
  const nodePlane = nodePlaneHandlers(gw, stopping.signal);
  const checks = { nats: connected, ...deps.readinessChecks, gateway: () => lifecycle.ready() };
  const app = buildApp(gw, { natsUp: connected, readiness: () => readiness(checks) }, nodePlane);
  const nodeNats = buildNodeNats({
    gw,
    edge: { authenticator: gw.authenticator, natsUp: connected, rateLimiter: gw.rateLimiter, nodeCalls: gw.nodeCalls },
    handlers: nodePlane,
  });

  const lifecycle = serviceLifecycle({
    name: "gateway",
    nc,
    logger,
    queue: queueGroups.gateway,
    ping: false,
    async start(run) {
      await gw.authenticator.start();
      serveGatewayRpcs(run, gw);
      // Users stored before the business index existed are added to it, off the start path.
      indexUsersOfBusinesses(gw.store)
        .then((added) => added > 0 && logger.info({ added }, "indexed users by business"))
        .catch((error: unknown) =>
          logger.warn(
            { err: error },
            "could not index users by business; users/list may miss older users until the next start",
          ),
        );
      nodeNats.start();
    },
    async stop(drain) {
      stopping.abort();
      // `close` stops accepting connections, closes the idle ones and waits for every
      // request in flight to be answered (app.ts closes each connection after its answer).
      // A request still open after HTTP_DRAIN_MS has its connection closed.
      const force = setTimeout(() => app.server.closeAllConnections(), HTTP_DRAIN_MS);
      await Promise.all([app.close(), nodeNats.stop()]);
      clearTimeout(force);
      await drain();
      gw.authenticator.stop();
      gw.signingKeys.stop();
    },
  });
  return { ...lifecycle, app };
}
