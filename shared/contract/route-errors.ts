import type { ErrorCode } from "../errors/index.js";
import type { RouteAuth, RpcName } from "./routes.js";

/**
 * The error codes each operation may answer with beyond those every operation of its kind
 * shares (`commonErrors`): what its section of docs/api.md lists. A new operation does
 * not compile until it is named here; `/openapi.json` lists both for each operation.
 */
export const ROUTE_ERRORS: { readonly [N in RpcName]: readonly ErrorCode[] } = {
  login: ["auth.login_failed", "auth.too_many_attempts"],
  requestOtp: [],
  verifyOtp: ["auth.otp_invalid", "auth.too_many_attempts"],
  refresh: ["auth.refresh_invalid"],
  logout: ["auth.refresh_invalid"],
  changePassword: ["auth.password_incorrect", "auth.too_many_attempts"],
  requestPasswordReset: [],
  confirmPasswordReset: ["auth.otp_invalid", "auth.too_many_attempts"],
  listUsers: [],
  inviteUser: ["resource.already_exists"],
  disableUser: ["resource.not_found", "user.cannot_disable_self", "user.last_admin"],
  enableUser: ["resource.not_found"],
  setUserRole: ["resource.not_found", "user.last_admin"],
  createApiKey: [],
  listApiKeys: [],
  revokeApiKey: ["resource.not_found"],
  updateApiKey: ["resource.not_found", "state.conflict"],
  submitJob: [
    "idempotency.key_reused",
    "plan.limit_exceeded",
    "queue.full",
    "quota.concurrent_jobs_exceeded",
    "quota.job_type_not_allowed",
    "quota.jobs_per_hour_exceeded",
    "quota.key_budget_exhausted",
    "resource.limit_reached",
    "resource.not_found",
    "state.conflict",
  ],
  retrieveJob: ["resource.not_found"],
  listJobs: [],
  cancelJob: ["resource.not_found", "state.conflict"],
  retryJob: [
    "idempotency.in_progress",
    "idempotency.key_reused",
    "plan.limit_exceeded",
    "queue.full",
    "quota.concurrent_jobs_exceeded",
    "quota.key_budget_exhausted",
    "resource.limit_reached",
    "resource.not_found",
    "state.conflict",
  ],
  deleteJob: ["resource.not_found", "state.conflict"],
  listArtifacts: ["resource.not_found"],
  deleteArtifact: ["resource.not_found"],
  presignUpload: ["resource.not_found"],
  presignDownload: ["resource.not_found"],
  logStreamUrl: ["resource.not_found"],
  registerNode: ["permission.denied"],
  heartbeat: ["resource.not_found"],
  poll: ["resource.not_found"],
  result: ["job.stale_attempt", "resource.not_found", "state.conflict"],
  pushLogs: ["job.stale_attempt", "logs.quota_exceeded"],
  drainNode: ["permission.denied", "resource.not_found"],
  listNodes: [],
  rotateNodeKey: ["permission.denied", "resource.not_found"],
  deleteNode: ["permission.denied", "resource.not_found", "state.conflict"],
  listPlans: [],
  getSubscription: [],
  cancelSubscription: ["permission.denied", "state.conflict"],
  createCheckout: ["permission.denied", "resource.not_found", "state.conflict"],
  listLedger: [],
  createWebhook: ["webhook.limit_reached"],
  listWebhooks: [],
  deleteWebhook: ["resource.not_found"],
  testWebhook: ["resource.not_found"],
  listWebhookDeliveries: ["resource.not_found"],
  retryWebhookDelivery: ["resource.not_found", "state.conflict"],
  createSchedule: ["quota.job_type_not_allowed"],
  listSchedules: [],
  retrieveSchedule: ["resource.not_found"],
  pauseSchedule: ["resource.not_found"],
  resumeSchedule: ["resource.not_found"],
  deleteSchedule: ["resource.not_found"],
};

/** The codes any operation with this credential may answer with: the edge's checks (body, app, credential, rate limit) and the failures of any call. */
export function commonErrors(auth: RouteAuth, scoped: boolean): ErrorCode[] {
  const codes: ErrorCode[] = [
    "request.invalid",
    "request.malformed_json",
    "request.unsupported_media_type",
    "request.too_large",
    "request.timeout",
    "rate.connections_exceeded",
    "route.method_not_allowed",
    "app.missing",
    "app.unknown",
  ];
  if (auth !== "public") codes.push("auth.missing_credentials", "auth.invalid_credentials");
  if (auth !== "public" && auth !== "node") codes.push("auth.token_expired");
  // A user's requests past the user's limits; a node's calls past the node's budget.
  if (auth !== "public") codes.push("rate.limited");
  if (auth === "jwt") codes.push("auth.jwt_required");
  if (auth === "user" || auth === "user_or_node") codes.push("auth.key_expired");
  if (auth === "node" || auth === "user") codes.push("permission.denied");
  if (scoped) codes.push("auth.scope_missing");
  codes.push("service.unavailable", "internal.error");
  return codes;
}
