import { CredentialHolder, type Credentials, type Tokens } from "./credentials.js";
import { ApiError, NetworkError, withoutQuery } from "./errors.js";
import { httpAnswerFacts, refusalOf } from "../../../shared/client/index.js";
import { IDEMPOTENCY_KEY_HEADER } from "../../../shared/contract/index.js";
import { DEFAULT_RETRY_POLICY, pause, retryDelayMs, type RetryPolicy } from "./retry-policy.js";

/** What a request may carry. */
export type RequestBody = NonNullable<RequestInit["body"]>;

export interface TransportOptions {
  /** The gateway's address, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** Sent as `X-App-ID` on every call. */
  appId: string;
  credentials?: Credentials | undefined;
  retry?: Partial<RetryPolicy>;
  /** A `fetch` of your own (proxies, tests). Default: the global one. */
  fetch?: typeof fetch;
  /** Sent as `User-Agent`, after the SDK's own name. */
  userAgent?: string;
  /** The time, in ms since the epoch, by which access tokens are refreshed ahead of expiry. Default: `Date.now`. */
  now?: () => number;
  /** Hears each retry before its wait: what failed and how long until the next try (a CLI tells its user). */
  onRetry?: (retry: RetryNotice) => void;
}

/** A request about to be sent again. */
export interface RetryNotice {
  method: string;
  /** The URL, without its query. */
  url: string;
  /** The retry about to be made, from 1. */
  retry: number;
  delayMs: number;
  /** The failure that is retried. */
  error: ApiError;
}

export interface SendOptions {
  signal?: AbortSignal | undefined;
  /**
   * Whether sending the request twice does no harm. Only such requests, and requests that
   * carry an `Idempotency-Key` header (the service answers a repeat as the first), are
   * retried after a lost connection or a 503 that may have come after the change; every
   * request is retried on 429, on `queue.full` and on `idempotency.in_progress`, which
   * refuse before anything changes.
   */
  idempotent: boolean;
  /** Extra headers (`Last-Event-ID`, `Range`, `Idempotency-Key`). */
  headers?: Record<string, string>;
  /**
   * What identifies the caller: `X-App-ID` and the client's credential (the default);
   * `X-App-ID` alone (the operations that take no credential: sign-in, refresh, logout);
   * or nothing (signed URLs, which are their own credential).
   */
  identify?: "credential" | "app" | "none";
}

/**
 * Refreshes one request may ask for on `auth.token_expired`: the first may only take the
 * pair another process kept (`loadTokens`), which the gateway can find expired as well.
 */
const REFRESHES_PER_REQUEST = 2;

/** Codes whose answer says nothing was done, so a retry cannot do it twice. */
const REFUSED_BEFORE_ANY_CHANGE = new Set([
  "rate.limited",
  "queue.full",
  "quota.jobs_per_hour_exceeded",
  "quota.concurrent_jobs_exceeded",
  "idempotency.in_progress",
]);

/** Whether sending the request again can do nothing twice: by its nature, or by its Idempotency-Key. */
function safeToRepeat(options: SendOptions): boolean {
  return (
    options.idempotent ||
    Object.keys(options.headers ?? {}).some((name) => name.toLowerCase() === IDEMPOTENCY_KEY_HEADER.toLowerCase())
  );
}

/** Reads the error envelope of a refused answer into an ApiError (`refusalOf`). */
export async function errorOf(response: Response): Promise<ApiError> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  return refusalOf(body, httpAnswerFacts(response));
}

/**
 * Sends requests to the gateway: credential headers (refreshing a session's tokens when the
 * service says the access token expired), and retries, with backoff, of answers that say
 * "try again later".
 */
export class Transport {
  readonly baseUrl: string;
  readonly appId: string;
  readonly credentials: CredentialHolder;
  private readonly policy: RetryPolicy;
  private readonly send: typeof fetch;
  private readonly userAgent: string;
  private readonly onRetry: ((retry: RetryNotice) => void) | undefined;

  constructor(options: TransportOptions, refresher: (refreshToken: string) => Promise<Tokens>) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.appId = options.appId;
    this.credentials = new CredentialHolder(options.credentials, refresher, options.now);
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    // Called through a wrapper: a browser's fetch throws "Illegal invocation" when called as another object's method.
    this.send = options.fetch ?? ((input, init) => fetch(input, init));
    this.userAgent = ["compute-job-sdk", options.userAgent].filter(Boolean).join(" ");
    this.onRetry = options.onRetry;
  }

  /** Resolves a path (or a full URL, as signed URLs may be) against the base URL. */
  url(pathOrUrl: string): string {
    return /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : `${this.baseUrl}${pathOrUrl}`;
  }

  /**
   * One request, retried as the options allow; answers the first 2xx or 3xx response,
   * and throws the ApiError of the last refusal.
   */
  async request(method: string, path: string, body: RequestBody | undefined, options: SendOptions): Promise<Response> {
    let refreshes = 0;
    const repeatable = safeToRepeat(options);
    const url = this.url(path);
    for (let retry = 0; ; retry += 1) {
      let response: Response;
      const headers = await this.headersFor(options, body);
      try {
        response = await this.send(url, {
          method,
          headers,
          ...(body !== undefined ? { body, duplex: "half" } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        } as RequestInit);
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        const failure = new NetworkError(error, { method, url });
        if (!repeatable || !failure.transient || retry >= this.policy.maxRetries || !replayable(body)) throw failure;
        await this.pauseBeforeRetry(method, url, retry + 1, failure, options.signal);
        continue;
      }
      if (response.ok || (response.status >= 300 && response.status < 400)) return response;
      const error = await errorOf(response);
      if (
        error.code === "auth.token_expired" &&
        refreshes < REFRESHES_PER_REQUEST &&
        this.credentials.canRefresh &&
        (options.identify ?? "credential") === "credential" &&
        replayable(body)
      ) {
        refreshes += 1;
        await this.credentials.refresh(bearerOf(headers));
        retry -= 1;
        continue;
      }
      const retryable =
        error.status === 429 || REFUSED_BEFORE_ANY_CHANGE.has(error.code) || (error.status === 503 && repeatable);
      // A wait longer than the cap (an hourly quota) is the caller's to decide on.
      const waitsTooLong = (error.retryAfterSeconds ?? 0) * 1000 > this.policy.maxDelayMs;
      if (!retryable || waitsTooLong || retry >= this.policy.maxRetries || !replayable(body)) throw error;
      await this.pauseBeforeRetry(method, url, retry + 1, error, options.signal);
    }
  }

  private async pauseBeforeRetry(
    method: string,
    url: string,
    retry: number,
    error: ApiError,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const delayMs = retryDelayMs(this.policy, retry, error.retryAfterSeconds);
    this.onRetry?.({ method, url: withoutQuery(url), retry, delayMs, error });
    await pause(delayMs, signal);
  }

  private async headersFor(options: SendOptions, body: RequestBody | undefined): Promise<Record<string, string>> {
    const identify = options.identify ?? "credential";
    const caller =
      identify === "none"
        ? {}
        : { "x-app-id": this.appId, ...(identify === "credential" ? await this.credentials.headers() : {}) };
    return {
      "user-agent": this.userAgent,
      ...caller,
      ...(typeof body === "string" ? { "content-type": "application/json" } : {}),
      ...options.headers,
    };
  }
}

/** The access token a request carried, if any. */
function bearerOf(headers: Record<string, string>): string | undefined {
  return headers.authorization?.replace(/^Bearer /, "");
}

/** A body that can be sent again (a stream is spent by its first send). */
function replayable(body: RequestBody | undefined): boolean {
  return (
    body === undefined ||
    typeof body === "string" ||
    body instanceof Uint8Array ||
    body instanceof ArrayBuffer ||
    body instanceof Blob
  );
}
