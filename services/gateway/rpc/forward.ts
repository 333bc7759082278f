import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import {
  hasLimits,
  type NodeContext,
  type QuotaLimits,
  RPC_ROUTES,
  type RpcName,
  type RpcRoutes,
  type UserContext,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { type InternalRpcName, type RequestRpcOptions, requestRpc } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { type Edge, registerRpc, type RpcHandler } from "../http/register-rpc.js";
import type { Caller } from "../identity/authenticator.js";
import type { ApiKeyRecord } from "../identity/records.js";

/** The limits of a user's API key, as the scheduler enforces them; null when it has none. */
function keyQuotas(key: ApiKeyRecord): QuotaLimits | null {
  const limits = {
    maxJobsPerHour: key.maxJobsPerHour,
    maxConcurrentJobs: key.maxConcurrentJobs,
    allowedJobTypes: key.allowedJobTypes,
  };
  return hasLimits(limits) ? limits : null;
}

/** The caller as the services behind the gateway see it. */
export function userContext(caller: Caller): UserContext {
  return {
    app_id: caller.app_id,
    business_id: caller.business_id,
    user_id: caller.user_id,
    role: caller.role,
    key_id: caller.credential.kind === "jwt" ? null : caller.credential.key_id,
    quotas: caller.credential.kind === "api_key" ? keyQuotas(caller.credential.key) : null,
    operator: false,
  };
}

export function nodeContext(caller: Caller): NodeContext {
  if (caller.credential.kind !== "node_key")
    throw new AppError("permission.denied", "This operation takes the node's own key.");
  return { app_id: caller.app_id, business_id: caller.business_id, node_id: caller.credential.node_id };
}

/** The context of a route open to users and nodes: a node acts as itself. */
export function actorContext(caller: Caller): UserContext | NodeContext {
  return caller.credential.kind === "node_key" ? nodeContext(caller) : userContext(caller);
}

/**
 * The operations the gateway does not own, each with the internal RPC that carries it to
 * the service that does.
 */
export const FORWARDED = {
  listJobs: "jobList",
  cancelJob: "jobCancel",
  retryJob: "jobRetry",
  deleteJob: "jobDelete",
  createWebhook: "webhookCreate",
  listWebhooks: "webhookList",
  deleteWebhook: "webhookDelete",
  testWebhook: "webhookTest",
  listWebhookDeliveries: "webhookDeliveriesList",
  retryWebhookDelivery: "webhookDeliveryRetry",
  createSchedule: "scheduleCreate",
  listSchedules: "scheduleList",
  retrieveSchedule: "scheduleRetrieve",
  pauseSchedule: "schedulePause",
  resumeSchedule: "scheduleResume",
  deleteSchedule: "scheduleDelete",
  listLedger: "creditLedgerList",
  listPlans: "billingPlansList",
  getSubscription: "billingSubscriptionGet",
  cancelSubscription: "billingSubscriptionCancel",
  heartbeat: "nodeHeartbeat",
  result: "nodeResult",
  pushLogs: "logsPush",
  drainNode: "nodeDrain",
  listNodes: "nodeList",
} as const satisfies Partial<Record<RpcName, InternalRpcName>>;
export type ForwardedName = keyof typeof FORWARDED;

/** `requestRpc` for an RPC chosen at run time (the route's entry in `FORWARDED`). */
const ask = requestRpc as (
  nc: GatewayContext["nc"],
  name: InternalRpcName,
  command: unknown,
  options: RequestRpcOptions,
) => Promise<unknown>;

/**
 * An operation the gateway does not own: one NATS request to the owning service with the
 * caller (as `context` sees it) and the validated body, its answer passed through.
 */
export function forward<N extends ForwardedName>(
  gw: GatewayContext,
  name: N,
  context: (caller: Caller) => UserContext | NodeContext = userContext,
): RpcHandler<RpcRoutes[N]> {
  const rpc = FORWARDED[name];
  return async (body, { caller, trace }) => {
    if (!caller) throw new AppError("auth.missing_credentials");
    return (await ask(gw.nc, rpc, { caller: context(caller), body }, { trace })) as z.input<RpcRoutes[N]["response"]>;
  };
}

/** Serves an operation the gateway forwards (`FORWARDED`) at its route. */
export function registerForwarded<N extends ForwardedName>(
  app: FastifyInstance,
  edge: Edge,
  gw: GatewayContext,
  name: N,
): void {
  registerRpc(app, edge, RPC_ROUTES[name], forward(gw, name));
}
