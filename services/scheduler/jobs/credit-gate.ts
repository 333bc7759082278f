import { isOperatorPool } from "../../../shared/records/index.js";
import {
  CreditCheckReply,
  type CreditCheckCommand,
  type SubmitJobRequest,
  type UserContext,
} from "../../../shared/contract/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { RequestTrace } from "../../../shared/tracing/index.js";
import type { SchedulerContext } from "../scheduler-context.js";

/** Billing answers from one KV read in the usual case; past this the submit answers 503. */
const CHECK_TIMEOUT_MS = 2000;

/**
 * Before a job on an operator pool is queued, billing checks the plan's limits and, for a
 * billed plan, the credit: it throws `plan.limit_exceeded` (403), `resource.limit_reached`
 * (402), or `service.unavailable` (503) when billing does not answer. A job on the
 * business's own pool never asks, so it is never refused for credit, billing up or down.
 * A retry asks too: it is another run on the operator's pool. `payer.key_id` is the key
 * the attempt will be charged to (the job's key): billing refuses it with 402
 * `quota.key_budget_exhausted` once that key's monthly budget is spent. Answers billing's
 * reply (plan, balance, rates), or null for a job on the business's own pool.
 */
export async function checkCredit(
  ctx: SchedulerContext,
  payer: Pick<UserContext, "app_id" | "business_id" | "key_id">,
  body: Pick<SubmitJobRequest, "pool_id" | "resources" | "timeout_seconds">,
  trace: RequestTrace | undefined,
): Promise<CreditCheckReply | null> {
  if (!isOperatorPool(ctx.config, body.pool_id)) return null;
  const command: CreditCheckCommand = {
    caller: { app_id: payer.app_id, business_id: payer.business_id, key_id: payer.key_id },
    body: { pool_id: body.pool_id, resources: body.resources, timeout_seconds: body.timeout_seconds },
  };
  return requestRpc(ctx.nc, "creditCheck", command, { timeoutMs: CHECK_TIMEOUT_MS, trace });
}
