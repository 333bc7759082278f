import { AppError } from "../../../shared/errors/index.js";

const DAY_MS = 86_400_000;

function refused(message: string): AppError {
  return new AppError("request.invalid", "The request body does not match the schema.", {
    details: { issues: [{ path: "expires_at", message }] },
  });
}

/**
 * When a new user key expires: the time asked for, which must be in the future and no
 * later than now + the operator's maximum; without one, now + that maximum, or never
 * (null) when the operator set none.
 */
export function keyExpiry(requested: string | undefined, nowMs: number, maxTtlDays: number | undefined): string | null {
  const latestMs = maxTtlDays === undefined ? null : nowMs + maxTtlDays * DAY_MS;
  if (requested === undefined) return latestMs === null ? null : new Date(latestMs).toISOString();
  const atMs = Date.parse(requested);
  if (atMs <= nowMs) throw refused("a time in the future");
  if (latestMs !== null && atMs > latestMs)
    throw refused(`at most ${maxTtlDays} days from now (CJS_API_KEY_MAX_TTL_DAYS)`);
  return new Date(atMs).toISOString();
}

/** Whether a key's `expires_at` has passed. */
export function hasExpired(expiresAt: string | null, nowMs: number): boolean {
  return expiresAt !== null && Date.parse(expiresAt) <= nowMs;
}
