import type { z } from "zod";
import { AppError, isErrorCode } from "../errors/index.js";

export interface EnvelopeFacts {
  /** False when the transport itself said failure (an HTTP status outside 2xx). */
  ok: boolean;
  /** `Retry-After`, in seconds, when the answer carried one. */
  retryAfter: string | null | undefined;
  /** The message when the answer is no envelope (`HTTP 502`). */
  fallbackMessage: string;
}

/**
 * The payload of a success envelope, checked against `schema`; otherwise throws the
 * AppError the envelope carries (code, message, details, `Retry-After`), or
 * `internal.error` when the answer is no envelope. Every transport reads answers so.
 */
export function readEnvelope<S extends z.ZodType>(schema: S, body: unknown, facts: EnvelopeFacts): z.infer<S> {
  const envelope = body as
    | { status?: string; payload?: unknown; code?: unknown; message?: unknown; details?: unknown }
    | undefined;
  if (facts.ok && envelope?.status === "SUCCESS") return schema.parse(envelope.payload);
  const retryAfter = Number(facts.retryAfter);
  throw new AppError(
    isErrorCode(envelope?.code) ? envelope.code : "internal.error",
    typeof envelope?.message === "string" ? envelope.message : facts.fallbackMessage,
    {
      ...(envelope?.details && typeof envelope.details === "object"
        ? { details: envelope.details as Record<string, unknown> }
        : {}),
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
    },
  );
}
