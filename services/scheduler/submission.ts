import type { z } from "zod";
import type { SubmitJobCommand, UserContext } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { operatorPoolKey, selfHostedPoolKey } from "../../shared/records/index.js";
import { checkJobType } from "./key-quota-rules.js";
import type { SchedulerContext } from "./scheduler-context.js";

/**
 * The checks of a submit's body and credential that need no I/O, refused as errors: the
 * timeout within the service's maximum, a type the caller's key may submit. A dry run
 * runs these same checks.
 */
export function checkSubmission(ctx: SchedulerContext, caller: Pick<UserContext, "quotas">, body: z.infer<typeof SubmitJobCommand>["body"]): void {
  if (body.timeout_seconds > ctx.config.CJS_MAX_JOB_TIMEOUT_SECONDS) {
    throw new AppError("request.invalid", "timeout_seconds is above the service's maximum.", {
      details: { issues: [{ path: "timeout_seconds", message: `at most ${ctx.config.CJS_MAX_JOB_TIMEOUT_SECONDS}` }] },
    });
  }
  checkJobType(caller.quotas, body.type);
}

/** The placement pool a job of the caller on `poolId` is queued in. */
export function jobPoolKey(ctx: SchedulerContext, caller: Pick<UserContext, "app_id" | "business_id">, poolId: string): string {
  return ctx.config.CJS_OPERATOR_POOLS.includes(poolId)
    ? operatorPoolKey(caller.app_id, poolId, ctx.config.CJS_SHARED_OPERATOR_POOLS)
    : selfHostedPoolKey(caller.business_id, poolId);
}
