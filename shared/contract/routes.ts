import { z } from "zod";
import {
  CreateApiKeyRequest,
  CreateApiKeyResponse,
  ListApiKeysResponse,
  RevokeApiKeyRequest,
  RevokeApiKeyResponse,
  UpdateApiKeyRequest,
  UpdateApiKeyResponse,
} from "./api-keys.js";
import {
  LoginRequest,
  LogoutRequest,
  LogoutResponse,
  RefreshRequest,
  RequestOtpRequest,
  RequestOtpResponse,
  TokenPair,
  VerifyOtpRequest,
} from "./auth.js";
import {
  ChangePasswordRequest,
  ChangePasswordResponse,
  ConfirmPasswordResetRequest,
  ConfirmPasswordResetResponse,
  InviteUserRequest,
  ListUsersRequest,
  ListUsersResponse,
  RequestPasswordResetRequest,
  RequestPasswordResetResponse,
  SetUserRoleRequest,
  UserRef,
  UserSummary,
} from "./users.js";
import { PresignDownloadRequest, PresignedUrl, PresignUploadRequest, RetrieveJobResponse } from "./artifacts.js";
import { DryRunResponse } from "./dry-run.js";
import { CreateCheckoutRequest, CreateCheckoutResponse, ListPlansResponse, SubscriptionResponse } from "./billing.js";
import { EmptyRequest } from "./common.js";
import { ListLedgerRequest, ListLedgerResponse } from "./credit.js";
import { JobPayload, JobRef, ListJobsRequest, ListJobsResponse, SubmitJobRequest, SubmitJobResponse } from "./jobs.js";
import { LogStreamUrlResponse } from "./logs.js";
import {
  DeleteArtifactRequest,
  DeleteArtifactResponse,
  DeleteJobResponse,
  ListArtifactsResponse,
} from "./retention.js";
import {
  DeleteNodeRequest,
  DeleteNodeResponse,
  DrainNodeRequest,
  DrainNodeResponse,
  HeartbeatRequest,
  HeartbeatResponse,
  JobResultRequest,
  JobResultResponse,
  ListNodesRequest,
  ListNodesResponse,
  PollRequest,
  PollResponse,
  PushLogsRequest,
  PushLogsResponse,
  RegisterNodeRequest,
  RegisterNodeResponse,
  RotateNodeKeyRequest,
  RotateNodeKeyResponse,
} from "./nodes.js";
import {
  CreateWebhookRequest,
  CreateWebhookResponse,
  DeleteWebhookResponse,
  DeliveryPayload,
  ListDeliveriesRequest,
  ListDeliveriesResponse,
  ListWebhooksRequest,
  ListWebhooksResponse,
  RetryDeliveryRequest,
  TestWebhookResponse,
  WebhookRef,
} from "./webhooks.js";
import {
  CreateScheduleRequest,
  DeleteScheduleResponse,
  ListSchedulesRequest,
  ListSchedulesResponse,
  SchedulePayload,
  ScheduleRef,
} from "./schedules.js";

/**
 * Who may call an operation. Every `/api/...` call also carries `X-App-ID`.
 * - `public`: no credential (sign-in operations).
 * - `jwt`: an interactive session only (`Authorization: Bearer <JWT>`).
 * - `user`: a bearer JWT or a user's `X-API-Key`.
 * - `node`: a node's own key (`X-API-Key` returned by register), and nothing else.
 * - `user_or_node`: either of the two above (a node acting on itself, or a user naming a node).
 */
export type RouteAuth = "public" | "jwt" | "user" | "node" | "user_or_node";

export interface RpcRoute<
  Req extends z.ZodType = z.ZodType,
  Res extends z.ZodType = z.ZodType,
  A extends RouteAuth = RouteAuth,
> {
  method: "POST";
  path: string;
  auth: A;
  request: Req;
  response: Res;
  /** The envelope's `message` on success. */
  message: string;
  /** Another `message` for a payload that answers something else (a submit's dry run); undefined keeps `message`. */
  messageFor?: (payload: unknown) => string | undefined;
  summary: string;
}

/** The envelope's `message` for a successful answer of `route` with `payload`. */
export function successMessage(route: Pick<RpcRoute, "message" | "messageFor">, payload: unknown): string {
  return route.messageFor?.(payload) ?? route.message;
}

/** The `message` of a submit answered with a dry run's plan. */
export const DRY_RUN_MESSAGE = "Dry run: nothing was created";

function rpc<Req extends z.ZodType, Res extends z.ZodType, A extends RouteAuth>(
  route: Omit<RpcRoute<Req, Res, A>, "method">,
): RpcRoute<Req, Res, A> {
  return { method: "POST", ...route };
}

/** Every JSON RPC of the HTTP API: the gateway, the typed client and the OpenAPI document read this table. */
export const RPC_ROUTES = {
  login: rpc({
    path: "/api/auth/LOGIN_EMAIL",
    auth: "public",
    request: LoginRequest,
    response: TokenPair,
    message: "Signed in",
    summary: "Sign in with e-mail and password; returns an access and a refresh token.",
  }),
  requestOtp: rpc({
    path: "/api/auth/request-otp",
    auth: "public",
    request: RequestOtpRequest,
    response: RequestOtpResponse,
    message: "If the address has an account, a code is on its way",
    summary: "Send a six-digit one-time code to the e-mail address.",
  }),
  verifyOtp: rpc({
    path: "/api/auth/verify-otp",
    auth: "public",
    request: VerifyOtpRequest,
    response: TokenPair,
    message: "Signed in",
    summary: "Verify a one-time code; issues the same token pair as a password sign-in.",
  }),
  refresh: rpc({
    path: "/api/auth/refresh",
    auth: "public",
    request: RefreshRequest,
    response: TokenPair,
    message: "Tokens refreshed",
    summary:
      "Trade a refresh token for a new pair. The token spent by the last refresh, sent again within the grace (30 s by default), gets the same new refresh token; any other spent token ends its whole session.",
  }),
  logout: rpc({
    path: "/api/auth/logout",
    auth: "public",
    request: LogoutRequest,
    response: LogoutResponse,
    message: "Signed out",
    summary: "End the session of a refresh token; its access tokens stop working too.",
  }),
  changePassword: rpc({
    path: "/api/compute/account/password/change",
    auth: "jwt",
    request: ChangePasswordRequest,
    response: ChangePasswordResponse,
    message: "Password changed; your other sessions are signed out",
    summary:
      "Change the signed-in user's password (the current one is required); every other session of the user ends.",
  }),
  requestPasswordReset: rpc({
    path: "/api/auth/password/reset/request",
    auth: "public",
    request: RequestPasswordResetRequest,
    response: RequestPasswordResetResponse,
    message: "If the address has an account, a code is on its way",
    summary: "Send a six-digit password-reset code to the e-mail address (it does not sign in).",
  }),
  confirmPasswordReset: rpc({
    path: "/api/auth/password/reset/confirm",
    auth: "public",
    request: ConfirmPasswordResetRequest,
    response: ConfirmPasswordResetResponse,
    message: "Password set; sign in with it",
    summary: "Set a new password with a reset (or invitation) code; every session of the user ends.",
  }),
  listUsers: rpc({
    path: "/api/compute/users/list",
    auth: "user",
    request: ListUsersRequest,
    response: ListUsersResponse,
    message: "Users",
    summary: "The users of the caller's business (business admins only), paginated by cursor.",
  }),
  inviteUser: rpc({
    path: "/api/compute/users/invite",
    auth: "user",
    request: InviteUserRequest,
    response: UserSummary,
    message: "User invited; a code is on its way to them",
    summary: "Add a user to the caller's business (business admins only) and e-mail them a code to set their password.",
  }),
  disableUser: rpc({
    path: "/api/compute/users/disable",
    auth: "user",
    request: UserRef,
    response: UserSummary,
    message: "User disabled",
    summary:
      "Refuse a user of the caller's business everywhere at once: sessions end, API keys stop (business admins only).",
  }),
  enableUser: rpc({
    path: "/api/compute/users/enable",
    auth: "user",
    request: UserRef,
    response: UserSummary,
    message: "User enabled",
    summary:
      "Let a disabled user of the caller's business sign in again; their API keys work again (business admins only).",
  }),
  setUserRole: rpc({
    path: "/api/compute/users/set-role",
    auth: "user",
    request: SetUserRoleRequest,
    response: UserSummary,
    message: "Role set",
    summary: "Make a user of the caller's business an admin or a member, at once everywhere (business admins only).",
  }),
  createApiKey: rpc({
    path: "/api/compute/api-keys/create",
    auth: "jwt",
    request: CreateApiKeyRequest,
    response: CreateApiKeyResponse,
    message: "API key created; store it now, it is not shown again",
    summary: "Mint an API key for the signed-in user, with optional quotas.",
  }),
  listApiKeys: rpc({
    path: "/api/compute/api-keys/list",
    auth: "user",
    request: EmptyRequest,
    response: ListApiKeysResponse,
    message: "API keys",
    summary: "The caller's API keys, without their secrets.",
  }),
  revokeApiKey: rpc({
    path: "/api/compute/api-keys/revoke",
    auth: "user",
    request: RevokeApiKeyRequest,
    response: RevokeApiKeyResponse,
    message: "API key revoked",
    summary: "Revoke one of the caller's keys; every gateway refuses it from then on.",
  }),
  updateApiKey: rpc({
    path: "/api/compute/api-keys/update",
    auth: "jwt",
    request: UpdateApiKeyRequest,
    response: UpdateApiKeyResponse,
    message: "API key updated",
    summary: "Rename one of the signed-in user's keys or change its monthly budget; a revoked key cannot be changed.",
  }),
  submitJob: rpc({
    path: "/api/compute/jobs/submit",
    auth: "user",
    request: SubmitJobRequest,
    // The dry run's answer for a body with `dry_run: true` (`RpcResponse` leaves it out; the SDK's `jobs.dryRun` types it).
    response: z.xor([SubmitJobResponse, DryRunResponse]),
    message: "Job queued",
    messageFor: (payload) =>
      typeof payload === "object" && payload !== null && "dry_run" in payload ? DRY_RUN_MESSAGE : undefined,
    summary:
      "Enqueue a new job. Submitting the same body again creates another job, unless both carry the same `Idempotency-Key`.",
  }),
  retrieveJob: rpc({
    path: "/api/compute/jobs/retrieve",
    auth: "user",
    request: JobRef,
    response: RetrieveJobResponse,
    message: "Job",
    summary: "One job with its timeline and its artifacts.",
  }),
  listJobs: rpc({
    path: "/api/compute/jobs/list",
    auth: "user",
    request: ListJobsRequest,
    response: ListJobsResponse,
    message: "Jobs",
    summary: "The business's jobs, newest first, filtered and paginated by cursor.",
  }),
  cancelJob: rpc({
    path: "/api/compute/jobs/cancel",
    auth: "user",
    request: JobRef,
    response: JobPayload,
    message: "Job cancelled",
    summary: "Cancel a queued, assigned or running job; its node is told to stop it.",
  }),
  retryJob: rpc({
    path: "/api/compute/jobs/retry",
    auth: "user",
    request: JobRef,
    response: JobPayload,
    message: "Job requeued",
    summary:
      "Requeue a failed or timed-out job under the same id, as its next attempt; with an `Idempotency-Key`, a repeat answers as the first did.",
  }),
  deleteJob: rpc({
    path: "/api/compute/jobs/delete",
    auth: "user",
    request: JobRef,
    response: DeleteJobResponse,
    message: "Job deleted",
    summary: "Delete a finished job with its log lines and artifacts; a job that has not finished answers 409.",
  }),
  listArtifacts: rpc({
    path: "/api/compute/jobs/artifacts/list",
    auth: "user",
    request: JobRef,
    response: ListArtifactsResponse,
    message: "Artifacts",
    summary: "The job's artifacts, by name.",
  }),
  deleteArtifact: rpc({
    path: "/api/compute/jobs/artifacts/delete",
    auth: "user",
    request: DeleteArtifactRequest,
    response: DeleteArtifactResponse,
    message: "Artifact deleted",
    summary: "Delete one artifact of the job: its bytes and its entry in the job's list.",
  }),
  presignUpload: rpc({
    path: "/api/compute/jobs/artifacts/presign-upload",
    auth: "jwt",
    request: PresignUploadRequest,
    response: PresignedUrl,
    message: "Upload URL",
    summary: "A signed URL to PUT one artifact of the caller's job to, valid for a limited time.",
  }),
  presignDownload: rpc({
    path: "/api/compute/jobs/artifacts/presign-download",
    auth: "jwt",
    request: PresignDownloadRequest,
    response: PresignedUrl,
    message: "Download URL",
    summary: "A signed URL to GET one artifact of the caller's job from, valid for a limited time.",
  }),
  logStreamUrl: rpc({
    path: "/api/compute/jobs/logs/stream-url",
    auth: "user",
    request: JobRef,
    response: LogStreamUrlResponse,
    message: "Log stream URL",
    summary:
      "A short-lived signed URL of the job's log stream (Server-Sent Events), for clients that cannot send headers such as a browser's EventSource.",
  }),
  registerNode: rpc({
    path: "/api/compute/nodes/register",
    auth: "user",
    request: RegisterNodeRequest,
    response: RegisterNodeResponse,
    message: "Node registered; store its key now, it is not shown again",
    summary: "First contact of an agent: creates the node and its own API key.",
  }),
  heartbeat: rpc({
    path: "/api/compute/nodes/heartbeat",
    auth: "node",
    request: HeartbeatRequest,
    response: HeartbeatResponse,
    message: "Heartbeat recorded",
    summary: "Keep-alive every heartbeat_interval_seconds, listing the attempts the node runs; names attempts to stop.",
  }),
  poll: rpc({
    path: "/api/compute/nodes/poll",
    auth: "node",
    request: PollRequest,
    response: PollResponse,
    message: "Assigned jobs",
    summary: "The node's assigned attempts (idempotent); waits up to wait_seconds for one when there are none.",
  }),
  result: rpc({
    path: "/api/compute/nodes/result",
    auth: "node",
    request: JobResultRequest,
    response: JobResultResponse,
    message: "Result recorded",
    summary: "The terminal result of an attempt. A resend is accepted once; an older attempt is refused.",
  }),
  pushLogs: rpc({
    path: "/api/compute/nodes/logs",
    auth: "node",
    request: PushLogsRequest,
    response: PushLogsResponse,
    message: "Log lines stored",
    summary: "A batch of log lines of an attempt, idempotent by seq.",
  }),
  drainNode: rpc({
    path: "/api/compute/nodes/drain",
    auth: "user_or_node",
    request: DrainNodeRequest,
    response: DrainNodeResponse,
    message: "Node updated",
    summary: "Stop (or, with draining false, resume) giving the node new jobs; running jobs finish.",
  }),
  listNodes: rpc({
    path: "/api/compute/nodes/list",
    auth: "user",
    request: ListNodesRequest,
    response: ListNodesResponse,
    message: "Nodes",
    summary: "The nodes of the caller's business, with state, last heartbeat, capacity and use.",
  }),
  rotateNodeKey: rpc({
    path: "/api/compute/nodes/rotate-key",
    auth: "user_or_node",
    request: RotateNodeKeyRequest,
    response: RotateNodeKeyResponse,
    message: "Node key rotated; store it now, it is not shown again",
    summary: "A new key for the node; the old one keeps working for grace_seconds.",
  }),
  deleteNode: rpc({
    path: "/api/compute/nodes/delete",
    auth: "user",
    request: DeleteNodeRequest,
    response: DeleteNodeResponse,
    message: "Node deleted",
    summary: "Delete an offline node of the caller's business; its keys stop working at once.",
  }),
  listPlans: rpc({
    path: "/api/compute/billing/plans/list",
    auth: "user",
    request: EmptyRequest,
    response: ListPlansResponse,
    message: "Plans",
    summary: "The subscription plans on offer.",
  }),
  getSubscription: rpc({
    path: "/api/compute/billing/subscription",
    auth: "user",
    request: EmptyRequest,
    response: SubscriptionResponse,
    message: "Subscription",
    summary:
      "The subscription of the caller's business: plan, status, current period, credit balance and usage this period.",
  }),
  cancelSubscription: rpc({
    path: "/api/compute/billing/subscription/cancel",
    auth: "user",
    request: EmptyRequest,
    response: SubscriptionResponse,
    message: "Subscription cancelled; it ends at the end of the current period",
    summary:
      "Cancel the business's subscription at the end of the current period, through the payment provider (business admins only).",
  }),
  createCheckout: rpc({
    path: "/api/compute/billing/checkout/create",
    auth: "jwt",
    request: CreateCheckoutRequest,
    response: CreateCheckoutResponse,
    message: "Checkout created",
    summary: "Start buying a plan with the payment provider (business admins only); send the browser to checkout_url.",
  }),
  listLedger: rpc({
    path: "/api/compute/billing/ledger/list",
    auth: "user",
    request: ListLedgerRequest,
    response: ListLedgerResponse,
    message: "Ledger entries",
    summary:
      "The business's compute-credit balance and ledger entries (grants, job debits, operator adjustments), newest first, paginated by cursor.",
  }),
  createWebhook: rpc({
    path: "/api/compute/webhooks/create",
    auth: "user",
    request: CreateWebhookRequest,
    response: CreateWebhookResponse,
    message: "Webhook created; keep the secret, it is not shown again",
    summary: "Subscribe a URL to job events; returns the webhook with its signing secret, shown this once.",
  }),
  listWebhooks: rpc({
    path: "/api/compute/webhooks/list",
    auth: "user",
    request: ListWebhooksRequest,
    response: ListWebhooksResponse,
    message: "Webhooks",
    summary: "The business's webhooks, oldest first, paginated by cursor; never their secrets.",
  }),
  deleteWebhook: rpc({
    path: "/api/compute/webhooks/delete",
    auth: "user",
    request: WebhookRef,
    response: DeleteWebhookResponse,
    message: "Webhook deleted",
    summary: "Delete a webhook; its pending deliveries are not sent.",
  }),
  testWebhook: rpc({
    path: "/api/compute/webhooks/test",
    auth: "user",
    request: WebhookRef,
    response: TestWebhookResponse,
    message: "Test event queued",
    summary: "Send a `webhook.test` event to the webhook through the normal delivery path; answers the delivery's id.",
  }),
  listWebhookDeliveries: rpc({
    path: "/api/compute/webhooks/deliveries",
    auth: "user",
    request: ListDeliveriesRequest,
    response: ListDeliveriesResponse,
    message: "Deliveries",
    summary: "The webhook's deliveries of the last 7 days, newest first, with each attempt's status code or error.",
  }),
  retryWebhookDelivery: rpc({
    path: "/api/compute/webhooks/deliveries/retry",
    auth: "user",
    request: RetryDeliveryRequest,
    response: DeliveryPayload,
    message: "Delivery queued again",
    summary:
      "Send a delivery that has ended (succeeded or failed) again now, signed afresh; a failure within its 24-hour window is tried again as usual.",
  }),
  createSchedule: rpc({
    path: "/api/compute/schedules/create",
    auth: "user",
    request: CreateScheduleRequest,
    response: SchedulePayload,
    message: "Schedule created",
    summary: "A schedule that submits a job from its template on each tick of a cron expression in a time zone.",
  }),
  listSchedules: rpc({
    path: "/api/compute/schedules/list",
    auth: "user",
    request: ListSchedulesRequest,
    response: ListSchedulesResponse,
    message: "Schedules",
    summary: "The business's schedules, newest first, paginated by cursor.",
  }),
  retrieveSchedule: rpc({
    path: "/api/compute/schedules/retrieve",
    auth: "user",
    request: ScheduleRef,
    response: SchedulePayload,
    message: "Schedule",
    summary: "One schedule with its next tick and its last run.",
  }),
  pauseSchedule: rpc({
    path: "/api/compute/schedules/pause",
    auth: "user",
    request: ScheduleRef,
    response: SchedulePayload,
    message: "Schedule paused",
    summary: "Stop a schedule making jobs until it is resumed; its jobs already made are untouched.",
  }),
  resumeSchedule: rpc({
    path: "/api/compute/schedules/resume",
    auth: "user",
    request: ScheduleRef,
    response: SchedulePayload,
    message: "Schedule resumed",
    summary: "Make jobs again from the next tick after now (ticks missed while paused are not made).",
  }),
  deleteSchedule: rpc({
    path: "/api/compute/schedules/delete",
    auth: "user",
    request: ScheduleRef,
    response: DeleteScheduleResponse,
    message: "Schedule deleted",
    summary: "Delete a schedule; the jobs it made are kept.",
  }),
} as const;

export type RpcRoutes = typeof RPC_ROUTES;
export type RpcName = keyof RpcRoutes;
export type RpcRequest<N extends RpcName> = z.input<RpcRoutes[N]["request"]>;
/** A call's answer. A dry run's is only for a body that asks for one, so it is left out here (`jobs.dryRun` in the SDK answers it). */
export type RpcResponse<N extends RpcName> = Exclude<z.infer<RpcRoutes[N]["response"]>, DryRunResponse>;
