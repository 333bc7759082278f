import { RPC_ROUTES, type RpcName, type RpcRequest, type RpcResponse } from "../../../shared/contract/index.js";

export { RPC_ROUTES };
export type { RpcName, RpcRequest, RpcResponse };

/**
 * Operations that may be sent twice with no harm: retried after a lost connection or a
 * 503. Any other (a submit, a key mint, and every operation added later until it is
 * listed here) is retried only on answers that refuse before anything changed.
 */
const IDEMPOTENT: ReadonlySet<RpcName> = new Set<RpcName>([
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
  "listSchedules",
  "retrieveSchedule",
  "pauseSchedule",
  "resumeSchedule",
]);

export function isIdempotent(name: RpcName): boolean {
  return IDEMPOTENT.has(name);
}
