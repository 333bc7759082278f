import type { Scope } from "./api-keys.js";
import { RPC_ROUTES, type RouteAuth, type RpcName, type RpcRoute, type RpcRoutes } from "./routes.js";

/** Routes no user's API key reaches: public, session-only and node-key-only ones need no scope. */
type Unscoped = Extract<RouteAuth, "public" | "jwt" | "node">;

/**
 * The scope a user's API key needs for each operation; null where no user's key is taken.
 * Every route must be named here: a route added to `RPC_ROUTES` without its scope, or a
 * scope given to a route no key can call, fails the typecheck.
 */
export const ROUTE_SCOPES: { readonly [N in RpcName]: RpcRoutes[N]["auth"] extends Unscoped ? null : Scope } = {
  login: null,
  requestOtp: null,
  verifyOtp: null,
  refresh: null,
  logout: null,
  createApiKey: null,
  listApiKeys: "keys:read",
  revokeApiKey: "keys:write",
  updateApiKey: null,
  submitJob: "jobs:write",
  retrieveJob: "jobs:read",
  listJobs: "jobs:read",
  cancelJob: "jobs:write",
  retryJob: "jobs:write",
  presignUpload: null,
  presignDownload: null,
  logStreamUrl: "jobs:read",
  registerNode: "nodes:register",
  heartbeat: null,
  poll: null,
  result: null,
  pushLogs: null,
  drainNode: "nodes:write",
  listNodes: "nodes:read",
  rotateNodeKey: "nodes:write",
  listPlans: "billing:read",
  getSubscription: "billing:read",
  createCheckout: null,
  listLedger: "billing:read",
  deleteNode: "nodes:write",
  cancelSubscription: "billing:write",
  changePassword: null,
  requestPasswordReset: null,
  confirmPasswordReset: null,
  listUsers: "users:read",
  inviteUser: "users:write",
  disableUser: "users:write",
  enableUser: "users:write",
  setUserRole: "users:write",
  deleteJob: "jobs:write",
  listArtifacts: "jobs:read",
  deleteArtifact: "jobs:write",
  createWebhook: "webhooks:write",
  listWebhooks: "webhooks:read",
  deleteWebhook: "webhooks:write",
  testWebhook: "webhooks:write",
  listWebhookDeliveries: "webhooks:read",
  retryWebhookDelivery: "webhooks:write",
  createSchedule: "schedules:write",
  listSchedules: "schedules:read",
  retrieveSchedule: "schedules:read",
  pauseSchedule: "schedules:write",
  resumeSchedule: "schedules:write",
  deleteSchedule: "schedules:write",
};

/**
 * Scopes a user's API key needs besides its `ROUTE_SCOPES` one. A schedule makes jobs, so
 * creating or resuming one also needs `jobs:write`: a key cannot have a schedule submit
 * what it may not submit itself.
 */
export const ALSO_NEEDED_SCOPES: { readonly [N in RpcName]?: readonly Scope[] } = {
  createSchedule: ["jobs:write"],
  resumeSchedule: ["jobs:write"],
};

/** The job log stream (`GET /api/compute/jobs/{jobId}/logs`), which is no RPC, reads a job. */
export const LOG_STREAM_SCOPE: Scope = "jobs:read";

/** So does the download of an artifact with a credential (`GET /api/compute/jobs/{jobId}/artifacts/{id}`), as listing them does. */
export const ARTIFACT_DOWNLOAD_SCOPE: Scope = "jobs:read";

const BY_ROUTE = new Map<RpcRoute, Scope | null>(
  (Object.keys(RPC_ROUTES) as RpcName[]).map((name) => [RPC_ROUTES[name], ROUTE_SCOPES[name]]),
);
/** Every scope of each RPC, worked out once: the check runs on every request. */
const ALL_BY_ROUTE = new Map<RpcRoute, readonly Scope[]>(
  (Object.keys(RPC_ROUTES) as RpcName[]).map((name) => {
    const scope = ROUTE_SCOPES[name];
    return [RPC_ROUTES[name], scope === null ? [] : [scope, ...(ALSO_NEEDED_SCOPES[name] ?? [])]];
  }),
);

/**
 * The scope an operation needs from a user's API key: its `ROUTE_SCOPES` entry, or the
 * `scope` a route outside `RPC_ROUTES` carries (an export); null for none.
 */
export function scopeOf(route: RpcRoute & { scope?: Scope }): Scope | null {
  return BY_ROUTE.get(route) ?? route.scope ?? null;
}

/** Every scope an operation needs from a user's API key: `scopeOf`'s, then `ALSO_NEEDED_SCOPES`; empty for none. */
export function scopesOf(route: RpcRoute & { scope?: Scope }): readonly Scope[] {
  return ALL_BY_ROUTE.get(route) ?? (route.scope === undefined ? [] : [route.scope]);
}

/** Whether a key with `held` scopes (null: every scope) may do what `needed` names. */
export function grantsScope(held: readonly string[] | null, needed: Scope | null): boolean {
  return needed === null || held === null || held.includes(needed);
}
