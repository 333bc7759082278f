import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { buildOpenApiDocument, PATH_PARAM_MAX_LENGTH, RPC_ROUTES } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import type { ReadinessReport } from "../../shared/runtime/index.js";
import { registerArtifactRoutes } from "./artifacts/register-artifact-routes.js";
import { registerBillingRoutes } from "./billing/register-billing-routes.js";
import { registerExportRoutes } from "./export/register-export-routes.js";
import type { GatewayContext } from "./gateway-context.js";
import { clientErrorHandler } from "./http/client-error.js";
import { edgeServerOptions, guardBodies, limitConnectionsPerAddress } from "./http/edge-guard.js";
import { serveCors } from "./http/cors.js";
import { answeredErrorOf, sendError } from "./http/envelope.js";
import { shedLoad } from "./http/load-shedding.js";
import { answerWrongMethods } from "./http/wrong-method.js";
import { idempotentRetry } from "./idempotency/idempotent-retry.js";
import { idempotentSubmit } from "./idempotency/idempotent-submit.js";
import { httpRequestSeconds } from "./http/http-metrics.js";
import { type Edge, registerRpc } from "./http/register-rpc.js";
import { requestIdOf } from "./http/request-id.js";
import { trackRoutes } from "./http/route-list.js";
import { traceRequests } from "./http/request-tracing.js";
import { toAppError } from "./http/to-app-error.js";
import { registerLogRoutes } from "./logs/register-log-routes.js";
import { SpentNodeQuotas } from "./logs/spent-node-quotas.js";
import { changePassword } from "./rpc/change-password.js";
import { confirmPasswordReset } from "./rpc/confirm-password-reset.js";
import { registerPortal } from "./portal/register-portal.js";
import { createApiKey } from "./rpc/create-api-key.js";
import { deleteNode } from "./rpc/delete-node.js";
import { disableUser } from "./rpc/disable-user.js";
import { enableUser } from "./rpc/enable-user.js";
import { registerForwarded } from "./rpc/forward.js";
import { inviteUser } from "./rpc/invite-user.js";
import { listApiKeys } from "./rpc/list-api-keys.js";
import { listUsers } from "./rpc/list-users.js";
import { login } from "./rpc/login.js";
import { logout } from "./rpc/logout.js";
import { nodePlaneHandlers, type HandlerTable, type NodePlaneName } from "./rpc/node-plane.js";
import { refresh } from "./rpc/refresh.js";
import { requestOtp } from "./rpc/request-otp.js";
import { requestPasswordReset } from "./rpc/request-password-reset.js";
import { retrieveJob } from "./rpc/retrieve-job.js";
import { revokeApiKey } from "./rpc/revoke-api-key.js";
import { updateApiKey } from "./rpc/update-api-key.js";
import { setUserRole } from "./rpc/set-user-role.js";
import { verifyOtp } from "./rpc/verify-otp.js";

/** The NATS failure behind a 503 (no responders, a timeout), for the operator's log: the caller's answer never names it. */
function unavailableCause(error: unknown, appError: AppError): string | undefined {
  if (appError.code !== "service.unavailable") return undefined;
  const cause = appError === error ? appError.cause : error;
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : undefined;
}

/** What the gateway tells `/readyz` and the edge about its own health. */
export interface EdgeHealth {
  natsUp: () => boolean;
  readiness: () => ReadinessReport;
}

/** Builds the HTTP edge. Only `main.ts` calls `listen`; tests use `app.inject()`. */
export function buildApp(
  gw: GatewayContext,
  health: EdgeHealth,
  nodePlane: HandlerTable<NodePlaneName> = nodePlaneHandlers(gw),
): FastifyInstance {
  const app = edgeServer(gw);
  guardEdge(app, gw);
  answerErrors(app);
  const edge = {
    authenticator: gw.authenticator,
    natsUp: health.natsUp,
    rateLimiter: gw.rateLimiter,
    nodeCalls: gw.nodeCalls,
  };
  registerAccountRoutes(app, edge, gw);
  registerJobRoutes(app, edge, gw);
  registerNodeRoutes(app, edge, gw, nodePlane);
  registerBillingRoutes(app, edge, gw);
  registerForwarded(app, edge, gw, "listLedger");
  registerExportRoutes(app, edge, gw);
  registerServiceFiles(app, gw, health);
  answerWrongMethods(app);
  return app;
}

/** The fastify instance with the edge's server settings: bodies, ids, logging, what the parser and router refuse. */
function edgeServer(gw: GatewayContext): FastifyInstance {
  return fastify({
    loggerInstance: gw.logger as FastifyBaseLogger,
    genReqId: requestIdOf,
    // One access line per request, written below: fastify's two lines cost a serialised request each and carry the raw URL, signatures included.
    logController: new LogController({ requestIdLogLabel: "request_id", disableRequestLogging: true }),
    bodyLimit: gw.config.CJS_MAX_BODY_BYTES,
    // Every id the contract lets a path carry fits; a longer parameter is an id of no format.
    routerOptions: { maxParamLength: PATH_PARAM_MAX_LENGTH },
    // What Node's HTTP parser refuses (bad framing, oversized headers) answers the envelope on the raw socket.
    clientErrorHandler: clientErrorHandler(gw.logger as FastifyBaseLogger),
    // What the router refuses before a route is chosen (a URL it cannot decode, a parameter over that length) answers the envelope too.
    frameworkErrors: (error, _request, reply) => {
      void sendError(reply, toAppError(error));
    },
    trustProxy: gw.config.CJS_TRUST_PROXY,
    // Requests that arrive while closing are still served; the process exits once they are done.
    return503OnClosing: false,
    ...edgeServerOptions(gw.config),
  });
}

/** What every request meets before its route: connection and body limits, tracing, CORS, load shedding, the access line. */
function guardEdge(app: FastifyInstance, gw: GatewayContext): void {
  limitConnectionsPerAddress(app.server, gw.config.CJS_HTTP_MAX_CONNECTIONS_PER_IP, gw.logger as FastifyBaseLogger);
  guardBodies(app, gw.config, gw.logger as FastifyBaseLogger);
  // Only JSON bodies: anything else is a 415, not a string handed to validation.
  app.removeContentTypeParser(["text/plain"]);
  trackRoutes(app);

  traceRequests(app);
  serveCors(app, gw.config.CJS_CORS_ORIGINS);
  shedLoad(app, {
    maxEventLoopDelayMs: gw.config.CJS_SHED_EVENT_LOOP_DELAY_MS,
    retryAfterSeconds: gw.config.CJS_SHED_RETRY_AFTER_SECONDS,
  });
  // While closing, every answer (also to a request that came before) closes its
  // connection, so a keep-alive client cannot hold the close open past its last request.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", async (_request, reply, payload) => {
    if (closing) reply.header("connection", "close");
    return payload;
  });
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    httpRequestSeconds.observe(
      { route, method: request.method, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    // The route's pattern, never the URL: a query string may hold a signature. One line per request, a refusal's
    // code (and a 503's cause) in it: a second line per refusal was a tenth of a gateway's time under a flood of them.
    request.log.info(
      {
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ...answeredErrorOf(request),
      },
      "request completed",
    );
  });
}

/** Every failure, and every path no route serves, answers the error envelope. */
function answerErrors(app: FastifyInstance): void {
  app.setErrorHandler(async (error, request, reply) => {
    const appError = toAppError(error);
    if (appError.code === "internal.error") request.log.error({ err: error }, "request failed");
    return sendError(reply, appError, unavailableCause(error, appError));
  });
  app.setNotFoundHandler(async (request, reply) =>
    sendError(
      reply,
      new AppError("route.not_found", `No operation at ${request.method} ${request.url.split("?")[0]}.`),
    ),
  );
}

/** Sign-in, sessions, users and API keys: the gateway's own. */
function registerAccountRoutes(app: FastifyInstance, edge: Edge, gw: GatewayContext): void {
  registerRpc(app, edge, RPC_ROUTES.login, login(gw));
  registerRpc(app, edge, RPC_ROUTES.requestOtp, requestOtp(gw));
  registerRpc(app, edge, RPC_ROUTES.verifyOtp, verifyOtp(gw));
  registerRpc(app, edge, RPC_ROUTES.refresh, refresh(gw));
  registerRpc(app, edge, RPC_ROUTES.logout, logout(gw));
  registerRpc(app, edge, RPC_ROUTES.changePassword, changePassword(gw));
  registerRpc(app, edge, RPC_ROUTES.requestPasswordReset, requestPasswordReset(gw));
  registerRpc(app, edge, RPC_ROUTES.confirmPasswordReset, confirmPasswordReset(gw));
  registerRpc(app, edge, RPC_ROUTES.listUsers, listUsers(gw));
  registerRpc(app, edge, RPC_ROUTES.inviteUser, inviteUser(gw));
  registerRpc(app, edge, RPC_ROUTES.disableUser, disableUser(gw));
  registerRpc(app, edge, RPC_ROUTES.enableUser, enableUser(gw));
  registerRpc(app, edge, RPC_ROUTES.setUserRole, setUserRole(gw));
  registerRpc(app, edge, RPC_ROUTES.createApiKey, createApiKey(gw));
  registerRpc(app, edge, RPC_ROUTES.listApiKeys, listApiKeys(gw));
  registerRpc(app, edge, RPC_ROUTES.revokeApiKey, revokeApiKey(gw));
  registerRpc(app, edge, RPC_ROUTES.updateApiKey, updateApiKey(gw));
}

/** The jobs, their webhooks and schedules (mostly forwarded to their services), artifacts and logs. */
function registerJobRoutes(app: FastifyInstance, edge: Edge, gw: GatewayContext): void {
  registerRpc(app, edge, RPC_ROUTES.submitJob, idempotentSubmit(gw));
  registerRpc(app, edge, RPC_ROUTES.retrieveJob, retrieveJob(gw));
  registerForwarded(app, edge, gw, "listJobs");
  registerForwarded(app, edge, gw, "cancelJob");
  registerRpc(app, edge, RPC_ROUTES.retryJob, idempotentRetry(gw));
  for (const name of [
    "deleteJob",
    "createWebhook",
    "listWebhooks",
    "deleteWebhook",
    "testWebhook",
    "listWebhookDeliveries",
    "retryWebhookDelivery",
    "createSchedule",
    "listSchedules",
    "retrieveSchedule",
    "pauseSchedule",
    "resumeSchedule",
    "deleteSchedule",
  ] as const)
    registerForwarded(app, edge, gw, name);
  registerArtifactRoutes(app, edge, gw);
  registerLogRoutes(app, edge, gw);
}

/** The node plane (served over NATS too, by the same handlers) and the nodes' management. */
function registerNodeRoutes(
  app: FastifyInstance,
  edge: Edge,
  gw: GatewayContext,
  nodePlane: HandlerTable<NodePlaneName>,
): void {
  registerRpc(app, edge, RPC_ROUTES.registerNode, nodePlane.registerNode);
  registerRpc(app, edge, RPC_ROUTES.heartbeat, nodePlane.heartbeat);
  registerRpc(app, edge, RPC_ROUTES.poll, nodePlane.poll);
  registerRpc(app, edge, RPC_ROUTES.result, nodePlane.result);
  const spentNodes = new SpentNodeQuotas(
    gw.clock,
    async (businessId) => !((await gw.store.businesses.get(businessId))?.value.operator ?? true),
  );
  registerRpc(app, edge, RPC_ROUTES.pushLogs, spentNodes.remembering(nodePlane.pushLogs), {
    onRequest: spentNodes.onRequest,
  });
  registerRpc(app, edge, RPC_ROUTES.drainNode, nodePlane.drainNode);
  registerRpc(app, edge, RPC_ROUTES.listNodes, nodePlane.listNodes);
  registerRpc(app, edge, RPC_ROUTES.rotateNodeKey, nodePlane.rotateNodeKey);
  registerRpc(app, edge, RPC_ROUTES.deleteNode, deleteNode(gw));
}

/** What is no operation: the JWKS, the OpenAPI document, health and readiness, the portal's files. */
function registerServiceFiles(app: FastifyInstance, gw: GatewayContext, health: EdgeHealth): void {
  app.get("/.well-known/jwks.json", async (_request, reply) => {
    reply.header("cache-control", "public, max-age=300");
    return gw.tokens.jwks();
  });
  const openApi = buildOpenApiDocument();
  app.get("/openapi.json", async () => openApi);
  app.get("/healthz", async () => ({ status: "ok" }));
  registerPortal(app, { portalDir: gw.config.CJS_PORTAL_DIR });
  app.get("/readyz", async (_request, reply) => {
    const report = health.readiness();
    return reply.code(report.ready ? 200 : 503).send(report);
  });
}
