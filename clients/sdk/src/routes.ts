import {
  IDEMPOTENCY_KEY_ROUTES,
  RPC_ROUTES,
  type DryRunResponse,
  type RpcName,
  type RpcRequest,
  type RpcResponse,
} from "../../../shared/contract/index.js";

export { RPC_ROUTES };
export type { DryRunResponse, RpcName, RpcRequest, RpcResponse };

/**
 * Operations that may be sent twice with no harm: retried after a lost connection or a
 * 503. Any other (a submit, a key mint, and every operation added later until it is
 * listed here) is retried only on answers that refuse before anything changed.
 */
const IDEMPOTENT: ReadonlySet<RpcName> = new Set<RpcName>([
  // The gateway answers a refresh token spent a moment ago with the same new pair (its grace), so a refresh whose answer was lost can be sent again.
  "refresh",
  "retrieveJob",
  "listJobs",
  "listApiKeys",
  "revokeApiKey",
  "updateApiKey",
  "logStreamUrl",
  "presignUpload",
  "presignDownload",
  "listNodes",
  "drainNode",
  "listPlans",
  "getSubscription",
  "listLedger",
  "listArtifacts",
  "listUsers",
  "disableUser",
  "enableUser",
  "setUserRole",
  "listWebhooks",
  "listWebhookDeliveries",
  "listSchedules",
  "retrieveSchedule",
  "pauseSchedule",
  "resumeSchedule",
]);

export function isIdempotent(name: RpcName): boolean {
  return IDEMPOTENT.has(name);
}

/**
 * Operations the service makes safe to repeat with an `Idempotency-Key`: the client sends
 * one with each call (the same on each of that call's retries), so they are retried like
 * the idempotent ones.
 */
export function takesIdempotencyKey(name: RpcName): boolean {
  return IDEMPOTENCY_KEY_ROUTES.has(name);
}
