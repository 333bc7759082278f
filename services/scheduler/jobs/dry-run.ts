import type { z } from "zod";
import {
  isTerminal,
  type CreditCheckReply,
  type DryRunPlacement,
  type DryRunPlan,
  type DryRunRefusal,
  type SubmitJobCommand,
} from "../../../shared/contract/index.js";
import { isAppError, type AppError } from "../../../shared/errors/index.js";
import type { ServedRequest } from "../../../shared/nats/index.js";
import { checkCredit } from "./credit-gate.js";
import { checkDependencies, type Dependencies } from "../queue/dependencies.js";
import { waitingReason } from "./job-as-seen.js";
import { keyQuotaHeadroom } from "./key-quotas.js";
import { nodesTakingNow } from "../placement/plan.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { checkSubmission, jobPoolKey } from "./submission.js";

type Command = z.infer<typeof SubmitJobCommand>;

/** Billing's answer, or the refusal a submit would get from it; billing out of reach throws, as for a submit. */
async function creditOf(
  ctx: SchedulerContext,
  caller: Command["caller"],
  body: Command["body"],
  trace: ServedRequest["trace"],
): Promise<{ reply: CreditCheckReply | null; refusal: AppError | null }> {
  try {
    return { reply: await checkCredit(ctx, caller, body, trace), refusal: null };
  } catch (error) {
    if (isAppError(error) && error.code !== "service.unavailable") return { reply: null, refusal: error };
    throw error;
  }
}

/** Where the job would go now, from this replica's picture of the nodes, and why it would wait if it would (the rule of a queued job's `pending_reason`). */
async function placementOf(
  ctx: SchedulerContext,
  caller: Command["caller"],
  body: Command["body"],
  waitingOn: readonly string[],
  nowMs: number,
): Promise<DryRunPlacement> {
  const job = {
    app_id: caller.app_id,
    business_id: caller.business_id,
    pool_key: jobPoolKey(ctx, caller, body.pool_id),
    type: body.type,
    labels: body.labels,
    resources: body.resources,
    concurrency: body.concurrency ?? null,
  };
  const reason = await waitingReason(
    ctx,
    { ...job, waiting_on: waitingOn, next_attempt_at: body.run_at ?? null },
    nowMs,
  );
  return {
    nodes: nodesTakingNow(job, ctx.view.nodeViews(nowMs)).map(({ node_id, capacity, used }) => ({
      node_id,
      pool_id: body.pool_id,
      free: {
        slots: capacity.slots - used.slots,
        cpu: capacity.cpu - used.cpu,
        memory_mb: capacity.memory_mb - used.memory_mb,
        gpu: capacity.gpu - used.gpu,
      },
    })),
    pending_reason: reason === "waiting_for_scheduler" ? null : reason,
  };
}

/** A job of `depends_on` that has already ended without success: the submitted job would be cancelled at once. */
function failedDependency({ parents }: Dependencies): DryRunRefusal | null {
  const ended = parents.find((parent) => parent.state !== "succeeded" && isTerminal(parent.state));
  return ended
    ? {
        code: "job.dependency_failed",
        message: `Job ${ended.id}, which this job would depend on, ended ${ended.state}: the job would be cancelled at once.`,
      }
    : null;
}

/**
 * What a submit of this body would do now, creating nothing: the same checks of the body,
 * credential and `depends_on` (refused the same way), then billing's, the queue's and the
 * key's answers read without admitting anything. A refusal for credit, queue room or
 * quota is the answer's `refusal` (the first a submit would meet, in a submit's order),
 * not an error: the dry run itself succeeded. So is a job of `depends_on` that already
 * ended without success (the submit would make a job cancelled at once).
 */
export async function dryRun(
  ctx: SchedulerContext,
  caller: Command["caller"],
  body: Command["body"],
  { trace }: Pick<ServedRequest, "trace">,
): Promise<DryRunPlan> {
  checkSubmission(ctx, caller, body);
  const nowMs = ctx.clock.now();
  const [dependencies, credit, quota] = await Promise.all([
    checkDependencies(ctx, caller, body.depends_on),
    creditOf(ctx, caller, body, trace),
    keyQuotaHeadroom(ctx, caller, nowMs),
  ]);
  const refused = credit.refusal ?? ctx.queueDepth.refusal() ?? quota?.refusal ?? null;
  const refusal = refused ? { code: refused.code, message: refused.message } : failedDependency(dependencies);
  const reply = credit.reply;
  return {
    dry_run: true,
    would_queue: refusal === null,
    refusal,
    placement: await placementOf(ctx, caller, body, dependencies.waitingOn, nowMs),
    cost:
      reply?.rates === undefined || reply.estimated_per_hour === undefined
        ? null
        : { estimated_per_hour: reply.estimated_per_hour, unit: "credits", plan_id: reply.plan_id, rates: reply.rates },
    credit: reply && { remaining: reply.balance, billed: reply.billed },
    key_quota: quota?.headroom ?? null,
  };
}
