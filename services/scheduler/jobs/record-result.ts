import type { z } from "zod";
import type { JobEvent, JobResultCommand, JobResultReply } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import { endAttempt } from "./attempt-metering.js";
import { releaseSoon } from "../placement/reservations.js";
import { releaseAndTakeNext } from "../placement/take-next.js";
import type { QueuedJobs } from "../queue/queued-jobs.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { findJobKey } from "./find-job-key.js";
import { finishGiven, staleAttempt } from "./transitions.js";

/**
 * Whether the node may learn anything of the job: it is its own business's, or the node held
 * one of its attempts (an operator node runs other businesses' jobs). Any other job is
 * another tenant's and is answered exactly like a missing one.
 */
function isKnownTo(job: JobRecord, caller: z.infer<typeof JobResultCommand>["caller"]): boolean {
  if (job.app_id === caller.app_id && job.business_id === caller.business_id) return true;
  return job.node_id === caller.node_id || job.timeline.some((event) => event.node_id === caller.node_id);
}

function isSameResult(job: JobRecord, nodeId: string, body: z.infer<typeof JobResultCommand>["body"]): boolean {
  if (job.attempt !== body.attempt) return false;
  if (job.node_id === nodeId && job.state === body.outcome && job.exit_code === body.exit_code) return true;
  // An attempt its retry policy sent back to the queue: its end is in the timeline.
  return (
    job.state === "queued" &&
    job.pending_reason === "retry_backoff" &&
    job.timeline.some((event) => isEndOf(event, nodeId, body))
  );
}

function isEndOf(event: JobEvent, nodeId: string, body: z.infer<typeof JobResultCommand>["body"]): boolean {
  return (
    event.attempt === body.attempt &&
    event.node_id === nodeId &&
    event.state === body.outcome &&
    event.exit_code === body.exit_code
  );
}

/**
 * A node's terminal result. Fenced by attempt and node: a result for an older attempt, or
 * from a node that no longer holds the job, is refused and changes nothing. The same
 * result sent again is answered as a duplicate. With `take_next`, the slot it frees is
 * given at once to the next job of this replica's queue for the node, started, in `next`.
 */
export function recordResult(ctx: SchedulerContext, queued: QueuedJobs) {
  return async ({ caller, body }: z.infer<typeof JobResultCommand>): Promise<JobResultReply> => {
    const key = await findJobKey(ctx, caller.node_id, body.job_id);
    // The owner's copy of the attempt, running or given (its start not written yet), saves the read.
    const latest = key ? ctx.active.latest(key) : undefined;
    const stored =
      (latest?.value.state === "running" || latest?.value.state === "assigned") &&
      latest.value.attempt === body.attempt &&
      latest.value.node_id === caller.node_id
        ? latest
        : key
          ? await ctx.store.jobs.get(key)
          : null;
    if (!key || !stored || !isKnownTo(stored.value, caller))
      throw new AppError("resource.not_found", `No job ${body.job_id}.`);
    const current = stored.value;
    if (isSameResult(current, caller.node_id, body))
      return { job_id: body.job_id, attempt: body.attempt, state: current.state, duplicate: true };
    // A start this replica holds unwritten is written with the end, at the time the node was given the job.
    const startedAtMs = ctx.starts.startedAt(key, body.attempt, caller.node_id);
    try {
      const { after } = await endAttempt(
        ctx,
        key,
        "result",
        (job) => {
          const now = ctx.clock.now();
          return finishGiven(job, body.attempt, caller.node_id, body, startedAtMs ?? now, now);
        },
        stored,
      );
      ctx.starts.settle(key, body.attempt);
      const freed = { jobId: body.job_id, attempt: body.attempt };
      const next = body.take_next ? await releaseAndTakeNext(ctx, queued, caller.node_id, freed) : null;
      if (!body.take_next) releaseSoon(ctx, caller.node_id, body.job_id, body.attempt);
      ctx.requestPlacement();
      return {
        job_id: body.job_id,
        attempt: body.attempt,
        state: after.state,
        duplicate: false,
        ...(next ? { next } : {}),
      };
    } catch (error) {
      // A resend that raced its own first copy.
      const latest = (await ctx.store.jobs.get(key))?.value;
      if (latest && isSameResult(latest, caller.node_id, body))
        return { job_id: body.job_id, attempt: body.attempt, state: latest.state, duplicate: true };
      if (error instanceof AppError && error.code === "job.stale_attempt") throw error;
      if (error instanceof AppError && error.code === "state.conflict" && latest)
        throw staleAttempt(latest, body.attempt);
      throw error;
    }
  };
}
