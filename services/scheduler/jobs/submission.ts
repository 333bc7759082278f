import type { z } from "zod";
import type { SubmitJobCommand, UserContext } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { isOperatorPool, operatorPoolKey, selfHostedPoolKey } from "../../../shared/records/index.js";
import { checkJobType } from "./key-quota-rules.js";
import type { SchedulerContext } from "../scheduler-context.js";

/** A `run_at` this little in the past is taken as now: the caller's clock may be a little behind ours. */
const RUN_AT_SKEW_MS = 5000;
const RUN_AT_MAX_AHEAD_MS = 365 * 86_400_000;

/** `run_at`, when given, is in the future (give or take the skew) and at most a year ahead. */
function checkRunAt(runAt: string | undefined, now: number): void {
  if (runAt === undefined) return;
  const at = Date.parse(runAt);
  const message =
    at <= now - RUN_AT_SKEW_MS
      ? "must be in the future"
      : at > now + RUN_AT_MAX_AHEAD_MS
        ? "at most 365 days ahead"
        : null;
  if (message)
    throw new AppError("request.invalid", `run_at ${message}.`, { details: { issues: [{ path: "run_at", message }] } });
}

/** A job's `timeout_seconds` within the service's maximum; `path` names the field in the refusal (a schedule's template). */
export function checkTimeout(
  ctx: Pick<SchedulerContext, "config">,
  timeoutSeconds: number,
  path = "timeout_seconds",
): void {
  if (timeoutSeconds <= ctx.config.CJS_MAX_JOB_TIMEOUT_SECONDS) return;
  throw new AppError("request.invalid", `${path} is above the service's maximum.`, {
    details: { issues: [{ path, message: `at most ${ctx.config.CJS_MAX_JOB_TIMEOUT_SECONDS}` }] },
  });
}

/**
 * The checks of a submit's body and credential that need no I/O, refused as errors: the
 * timeout within the service's maximum, a `run_at` ahead, a type the caller's key may submit. A dry run
 * runs these same checks.
 */
export function checkSubmission(
  ctx: SchedulerContext,
  caller: Pick<UserContext, "quotas">,
  body: z.infer<typeof SubmitJobCommand>["body"],
): void {
  checkTimeout(ctx, body.timeout_seconds);
  checkRunAt(body.run_at, ctx.clock.now());
  checkJobType(caller.quotas, body.type);
}

/** The placement pool a job of the caller on `poolId` is queued in. */
export function jobPoolKey(
  ctx: SchedulerContext,
  caller: Pick<UserContext, "app_id" | "business_id">,
  poolId: string,
): string {
  return isOperatorPool(ctx.config, poolId)
    ? operatorPoolKey(caller.app_id, poolId, ctx.config.CJS_SHARED_OPERATOR_POOLS)
    : selfHostedPoolKey(caller.business_id, poolId);
}
