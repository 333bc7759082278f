/**
 * The closed catalogue of error codes. Clients match on `code`; codes are never
 * renamed or reused. `docs/errors.md` lists the same table (a test keeps them in step).
 */
export interface ErrorSpec {
  /** HTTP status the gateway answers with. */
  readonly http: number;
  /** Whether the same request may succeed later (the gateway sends `Retry-After`). */
  readonly retryable: boolean;
  /** One line for the docs and the default message. */
  readonly summary: string;
}

export const ERROR_CATALOGUE = {
  "request.invalid": {
    http: 400,
    retryable: false,
    summary:
      "The body or a parameter does not match the schema (an id not of its format, a body that is not an object); `details.issues` lists each field path and problem.",
  },
  "request.malformed_json": {
    http: 400,
    retryable: false,
    summary: "The body is not valid JSON, or holds a `__proto__` key (or `constructor.prototype`).",
  },
  "request.unsupported_media_type": {
    http: 415,
    retryable: false,
    summary: "The Content-Type of a JSON operation is not `application/json`.",
  },
  "request.too_large": {
    http: 413,
    retryable: false,
    summary: "The body is larger than the configured limit; over HTTP the connection is closed after the answer.",
  },
  "request.headers_too_large": {
    http: 431,
    retryable: false,
    summary:
      "The request line and headers are larger than the HTTP server reads; the connection is closed after the answer.",
  },
  "request.timeout": {
    http: 408,
    retryable: true,
    summary:
      "The request did not arrive in full within the server's request timeout; the connection is closed after the answer.",
  },
  "request.range_not_satisfiable": {
    http: 416,
    retryable: false,
    summary: "The `Range` starts beyond the end of the content; `Content-Range` gives its size.",
  },
  "route.not_found": { http: 404, retryable: false, summary: "No operation lives at this path." },
  "route.method_not_allowed": {
    http: 405,
    retryable: false,
    summary: "The path exists but not with this HTTP method; the `Allow` header names the right one.",
  },
  "app.missing": { http: 400, retryable: false, summary: "The `X-App-ID` header is missing." },
  "app.unknown": { http: 401, retryable: false, summary: "The `X-App-ID` names no application." },
  "auth.missing_credentials": {
    http: 401,
    retryable: false,
    summary: "Neither `Authorization: Bearer` nor `X-API-Key` was sent.",
  },
  "auth.invalid_credentials": {
    http: 401,
    retryable: false,
    summary: "The credential is unknown, malformed, revoked, expired or belongs to another application.",
  },
  "auth.token_expired": {
    http: 401,
    retryable: false,
    summary: "The bearer token is genuine but past its `exp`; refresh it (or sign in again) and repeat the request.",
  },
  "auth.key_expired": {
    http: 401,
    retryable: false,
    summary: "The user's API key is genuine but past its `expires_at`; mint a new key (`details.expired_at`).",
  },
  "auth.login_failed": {
    http: 401,
    retryable: false,
    summary: "The e-mail and password do not match an account (the same answer for an unknown e-mail).",
  },
  "auth.too_many_attempts": {
    http: 429,
    retryable: true,
    summary: "Too many failed sign-in attempts for this account or address; wait `Retry-After` seconds.",
  },
  "auth.otp_invalid": {
    http: 401,
    retryable: false,
    summary: "The one-time code is wrong, expired, already used or out of tries.",
  },
  "auth.refresh_invalid": {
    http: 401,
    retryable: false,
    summary: "The refresh token is unknown, expired, already used or its session was ended.",
  },
  "auth.password_incorrect": {
    http: 403,
    retryable: false,
    summary:
      "The current password given to change the password is wrong; it counts towards the sign-in lock of the account.",
  },
  "auth.jwt_required": {
    http: 403,
    retryable: false,
    summary: "This operation needs an interactive session (a bearer JWT); an API key cannot perform it.",
  },
  "auth.scope_missing": {
    http: 403,
    retryable: false,
    summary:
      "The API key does not hold the scope this operation needs (`details.scope`); use a key that does, or a session.",
  },
  "cors.origin_not_allowed": {
    http: 403,
    retryable: false,
    summary:
      "A CORS preflight from an `Origin` that `CJS_CORS_ORIGINS` does not list; the answer carries no CORS headers.",
  },
  "permission.denied": {
    http: 403,
    retryable: false,
    summary: "The caller is authenticated but may not perform this operation.",
  },
  "resource.not_found": {
    http: 404,
    retryable: false,
    summary: "No such record for this caller (records of other tenants are reported the same way).",
  },
  "resource.already_exists": { http: 409, retryable: false, summary: "A record with this identity already exists." },
  "user.last_admin": {
    http: 409,
    retryable: false,
    summary:
      "The change would leave the business without an active admin; make another user admin first. Nothing changed.",
  },
  "user.cannot_disable_self": {
    http: 409,
    retryable: false,
    summary: "A business admin cannot disable their own account; another admin must. Nothing changed.",
  },
  "idempotency.key_reused": {
    http: 422,
    retryable: false,
    summary:
      "The `Idempotency-Key` was used in the last 24 h for another request (another body or operation); nothing was done. Use a new key for a new request.",
  },
  "idempotency.in_progress": {
    http: 409,
    retryable: true,
    summary:
      "A request with this `Idempotency-Key` is still being served; retry after `Retry-After` seconds for its answer.",
  },
  "state.conflict": {
    http: 409,
    retryable: false,
    summary: "The record is not in a state that allows this operation; `details.state` is its current state.",
  },
  "job.stale_attempt": {
    http: 409,
    retryable: false,
    summary:
      "The result or log batch is for an attempt this node does not hold (an older attempt, another node's, or one already ended otherwise); it changed nothing.",
  },
  "logs.quota_exceeded": {
    http: 429,
    retryable: false,
    summary:
      "A log push over a log quota: the node's bytes this UTC hour (`CJS_LOG_MAX_BYTES_PER_NODE_PER_HOUR`) or the job's business's bytes this UTC day (its plan's `max_log_bytes_per_day`); nothing was stored. Not retried: the agent drops the attempt's later lines (`details.limit`, `details.max_bytes`, `details.resets_at`).",
  },
  "artifacts.quota_exceeded": {
    http: 413,
    retryable: false,
    summary:
      "An artifact upload that does not fit in what its business's artifact storage budget leaves (its plan's `max_artifact_bytes`, every artifact kept until deleted or removed with its job; a new version of a name counts less the one it replaces); nothing was stored. Delete artifacts or jobs to make room (`details.max_bytes`, `details.used_bytes`). Over HTTP the connection is closed after the answer.",
  },
  "logs.stream_limit_reached": {
    http: 429,
    retryable: true,
    summary:
      "Too many job log streams open at once for this user, this signed URL or this business on this gateway (`details.limit`, `details.max`); close one or retry after `Retry-After`.",
  },
  "queue.full": {
    http: 503,
    retryable: true,
    summary: "The job queue is at its limit; nothing was queued. Retry after `Retry-After` seconds.",
  },
  "url.signature_invalid": {
    http: 403,
    retryable: false,
    summary:
      "The signed URL was altered (a parameter changed, added or given twice), or signed for another method or path.",
  },
  "url.expired": {
    http: 403,
    retryable: false,
    summary: "The signed URL is past its `expires_at`; ask for a new one.",
  },
  "webhook.signature_invalid": {
    http: 400,
    retryable: false,
    summary:
      "The webhook's signature is missing, malformed, does not match its body, or is too old or too new; nothing changed.",
  },
  "resource.limit_reached": { http: 402, retryable: false, summary: "The account's compute credit is exhausted." },
  "quota.job_type_not_allowed": {
    http: 403,
    retryable: false,
    summary: "The API key's `allowedJobTypes` does not list the job's `type`; nothing was queued.",
  },
  "quota.jobs_per_hour_exceeded": {
    http: 429,
    retryable: true,
    summary:
      "The API key reached its `maxJobsPerHour`; nothing was queued. `Retry-After` is when its oldest submit of the hour leaves the window.",
  },
  "quota.concurrent_jobs_exceeded": {
    http: 429,
    retryable: true,
    summary:
      "The API key has `maxConcurrentJobs` jobs that have not ended; nothing was queued. Retry after `Retry-After` seconds, or once a job ends.",
  },
  "quota.key_budget_exhausted": {
    http: 402,
    retryable: false,
    summary:
      "The API key's jobs reached its `budget_credits_per_month` this calendar month (UTC); nothing was queued. Other keys and sessions of the business are not affected (`details.budget`, `details.spent`, `details.resets_at`).",
  },
  "plan.limit_exceeded": {
    http: 403,
    retryable: false,
    summary:
      "The job asks for more than the business's plan allows on an operator pool (`details.limit`, `details.max`).",
  },
  "webhook.limit_reached": {
    http: 409,
    retryable: false,
    summary: "The business has as many webhooks as it may (`details.limit`); delete one before creating another.",
  },
  "rate.limited": { http: 429, retryable: true, summary: "Too many requests; wait `Retry-After` seconds." },
  "rate.connections_exceeded": {
    http: 429,
    retryable: true,
    summary:
      "The client address holds the gateway's per-address connection budget (`CJS_HTTP_MAX_CONNECTIONS_PER_IP`) already; the connection is closed after the answer. Close idle connections or retry after `Retry-After`.",
  },
  "service.unavailable": {
    http: 503,
    retryable: true,
    summary:
      "A dependency (NATS or a backing service) is unreachable, or the gateway is overloaded (load shedding); retry after `Retry-After` seconds.",
  },
  "internal.error": {
    http: 500,
    retryable: true,
    summary: "An unexpected fault. Nothing internal is disclosed; quote the request id when reporting it.",
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CATALOGUE, value);
}

export function errorSpec(code: ErrorCode): ErrorSpec {
  return ERROR_CATALOGUE[code];
}
