import { errorSpec, isErrorCode } from "../errors/index.js";
import { ApiError } from "./api-error.js";

/** What came with an answer besides its body. */
export interface AnswerFacts {
  /** The HTTP status; absent for a NATS reply, which has none. */
  status?: number | undefined;
  /** `Retry-After` as sent (seconds), when it was. */
  retryAfter?: string | null | undefined;
  /** `X-Request-ID`, when the answer carried one. */
  requestId?: string | null | undefined;
}

/** The facts of an HTTP answer. */
export function httpAnswerFacts(response: {
  status: number;
  headers: { get(name: string): string | null };
}): AnswerFacts {
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    requestId: response.headers.get("x-request-id"),
  };
}

type Envelope = { status?: unknown; payload?: unknown; code?: unknown; message?: unknown; details?: unknown };

function retryAfterSeconds(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

/**
 * The ApiError an answer that is no success carries: the envelope's code, message and
 * details with `Retry-After` and the request id. An answer that is no envelope is
 * `request.invalid` for a 4xx (a proxy refused the request as sent) and `internal.error`
 * otherwise, with `HTTP <status>` as its message.
 */
export function refusalOf(body: unknown, facts: AnswerFacts): ApiError {
  const envelope = (typeof body === "object" && body !== null ? body : {}) as Envelope;
  const { status } = facts;
  const code =
    typeof envelope.code === "string"
      ? envelope.code
      : status !== undefined && status >= 400 && status < 500
        ? "request.invalid"
        : "internal.error";
  return new ApiError({
    code,
    message:
      typeof envelope.message === "string"
        ? envelope.message
        : status === undefined
          ? "The gateway's answer was not an envelope."
          : `HTTP ${status}`,
    status: status ?? (isErrorCode(code) ? errorSpec(code).http : 500),
    details:
      typeof envelope.details === "object" && envelope.details !== null
        ? (envelope.details as Record<string, unknown>)
        : undefined,
    requestId: facts.requestId ?? undefined,
    retryAfterSeconds: retryAfterSeconds(facts.retryAfter),
  });
}

/**
 * The payload of a success envelope (a 2xx answer, or a NATS reply, whose status is
 * `SUCCESS`); otherwise throws the ApiError the answer carries (`refusalOf`). Every program
 * that calls the service reads its answers so; the caller checks the payload's shape.
 */
export function readEnvelope(body: unknown, facts: AnswerFacts): unknown {
  const ok = facts.status === undefined || (facts.status >= 200 && facts.status < 300);
  if (ok && (body as Envelope | undefined)?.status === "SUCCESS") return (body as Envelope).payload;
  throw refusalOf(body, facts);
}
