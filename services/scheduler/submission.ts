import type { z } from "zod";
import type { SubmitJobCommand, UserContext } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { operatorPoolKey, selfHostedPoolKey } from "../../shared/records/index.js";
import { checkJobType } from "./key-quota-rules.js";
import type { SchedulerContext } from "./scheduler-context.js";

/** A `run_at` this little in the past is taken as now: the caller's clock may be a little behind ours. */
const RUN_AT_SKEW_MS = 5000;
const RUN_AT_MAX_AHEAD_MS = 365 * 86_400_000;

/** `run_at`, when given, is in the future (give or take the skew) and at most a year ahead. */
function checkRunAt(runAt: string | undefined, now: number): void {
  if (runAt === undefined) return;
  const at = Date.parse(runAt);
  const message = at <= now - RUN_AT_SKEW_MS ? "must be in the future" : at > now + RUN_AT_MAX_AHEAD_MS ? "at most 365 days ahead" : null;
  if (message) throw new AppError("request.invalid", `run_at ${message}.`, { details: { issues: [{ path: "run_at", message }] } });
}

/**
 * The checks of a submit's body and credential that need no I/O, refused as errors: the
 * timeout within the service's maximum, a `run_at` ahead, a type the caller's key may submit. A dry run
 * runs these same checks.
 */
export function checkSubmission(ctx: SchedulerContext, caller: Pick<UserContext, "quotas">, body: z.infer<typeof SubmitJobCommand>["body"]): void {
  if (body.timeout_seconds > ctx.config.CJS_MAX_JOB_TIMEOUT_SECONDS) {
    throw new AppError("request.invalid", "timeout_seconds is above the service's maximum.", {
      details: { issues: [{ path: "timeout_seconds", message: `at most ${ctx.config.CJS_MAX_JOB_TIMEOUT_SECONDS}` }] },
    });
  }
  checkRunAt(body.run_at, ctx.clock.now());
  checkJobType(caller.quotas, body.type);
}

/** The placement pool a job of the caller on `poolId` is queued in. */
export function jobPoolKey(ctx: SchedulerContext, caller: Pick<UserContext, "app_id" | "business_id">, poolId: string): string {
  return ctx.config.CJS_OPERATOR_POOLS.includes(poolId)
    ? operatorPoolKey(caller.app_id, poolId, ctx.config.CJS_SHARED_OPERATOR_POOLS)
    : selfHostedPoolKey(caller.business_id, poolId);
}
