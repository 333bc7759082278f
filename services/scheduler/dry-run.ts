import type { z } from "zod";
import type { CreditCheckReply, DryRunPlacement, DryRunPlan, SubmitJobCommand } from "../../shared/contract/index.js";
import { isAppError, type AppError } from "../../shared/errors/index.js";
import type { ServedRequest } from "../../shared/nats/index.js";
import { checkCredit } from "./credit-gate.js";
import { heldReason } from "./job-holds.js";
import { keyQuotaHeadroom } from "./key-quotas.js";
import { nodesTakingNow, pendingReason } from "./plan.js";
import type { SchedulerContext } from "./scheduler-context.js";
import { checkSubmission, jobPoolKey } from "./submission.js";

type Command = z.infer<typeof SubmitJobCommand>;

/** Billing's answer, or the refusal a submit would get from it; billing out of reach throws, as for a submit. */
async function creditOf(ctx: SchedulerContext, caller: Command["caller"], body: Command["body"], trace: ServedRequest["trace"]): Promise<{ reply: CreditCheckReply | null; refusal: AppError | null }> {
  try {
    return { reply: await checkCredit(ctx, caller, body, trace), refusal: null };
  } catch (error) {
    if (isAppError(error) && error.code !== "service.unavailable") return { reply: null, refusal: error };
    throw error;
  }
}

/** Where the job would go now, from this replica's picture of the nodes, and why it would wait if it would. */
function placementOf(ctx: SchedulerContext, caller: Command["caller"], body: Command["body"], nowMs: number): DryRunPlacement {
  const job = { pool_key: jobPoolKey(ctx, caller, body.pool_id), type: body.type, labels: body.labels, resources: body.resources };
  const nodes = ctx.view.nodeViews(nowMs);
  const held = heldReason({ waiting_on: body.depends_on ?? [], next_attempt_at: body.run_at ?? null }, nowMs);
  const reason = pendingReason(job, nodes);
  return {
    nodes: nodesTakingNow(job, nodes).map(({ node_id, capacity, used }) => ({
      node_id,
      pool_id: body.pool_id,
      free: { slots: capacity.slots - used.slots, cpu: capacity.cpu - used.cpu, memory_mb: capacity.memory_mb - used.memory_mb, gpu: capacity.gpu - used.gpu },
    })),
    pending_reason: held ?? (reason === "waiting_for_scheduler" ? null : reason),
  };
}

/**
 * What a submit of this body would do now, creating nothing: the same checks of the body
 * and credential (refused the same way), then billing's, the queue's and the key's
 * answers read without admitting anything. A refusal for credit, queue room or quota is
 * the answer's `refusal` (the first a submit would meet, in a submit's order), not an
 * error: the dry run itself succeeded.
 */
export async function dryRun(ctx: SchedulerContext, caller: Command["caller"], body: Command["body"], { trace }: Pick<ServedRequest, "trace">): Promise<DryRunPlan> {
  checkSubmission(ctx, caller, body);
  const nowMs = ctx.clock.now();
  const [credit, quota] = await Promise.all([creditOf(ctx, caller, body, trace), keyQuotaHeadroom(ctx, caller, nowMs)]);
  const refusal = credit.refusal ?? ctx.queueDepth.refusal() ?? quota?.refusal ?? null;
  const reply = credit.reply;
  return {
    dry_run: true,
    would_queue: refusal === null,
    refusal: refusal && { code: refusal.code, message: refusal.message },
    placement: placementOf(ctx, caller, body, nowMs),
    cost:
      reply?.rates === undefined || reply.estimated_per_hour === undefined
        ? null
        : { estimated_per_hour: reply.estimated_per_hour, unit: "credits", plan_id: reply.plan_id, rates: reply.rates },
    credit: reply && { remaining: reply.balance, billed: reply.billed },
    key_quota: quota?.headroom ?? null,
  };
}
