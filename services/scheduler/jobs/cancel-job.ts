import type { z } from "zod";
import type { JobPayload, JobRefCommand } from "../../../shared/contract/index.js";
import { jobKey, publicJob, type JobRecord } from "../../../shared/records/index.js";
import { endAttempt } from "./attempt-metering.js";
import { releaseEndedAttempt } from "../placement/reservations.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { cancel, startGiven } from "./transitions.js";

/**
 * Cancels the job stored under `key` (queued, assigned or running; another state is
 * `state.conflict`) and frees its node's slot; returns the record as cancelled. An attempt
 * whose node was given it while its start is held here started then: it is cancelled after
 * its start, as a running one is (and charged so on an operator pool).
 */
export async function cancelJobAt(ctx: SchedulerContext, key: string): Promise<JobRecord> {
  const givenAt = (job: JobRecord) =>
    job.node_id === null ? undefined : ctx.starts.startedAt(key, job.attempt, job.node_id);
  const { before, after } = await endAttempt(ctx, key, "cancel", (job) =>
    cancel(startGiven(job, givenAt(job)), ctx.clock.now()),
  );
  if (before.state === "assigned") ctx.starts.settle(key, before.attempt);
  if (before.node_id !== null && (before.state === "assigned" || before.state === "running")) {
    await releaseEndedAttempt(ctx, before.node_id, before.job_id, before.attempt);
    ctx.requestPlacement();
  }
  return after;
}

/** Cancel a queued, assigned or running job; its node learns it from its next heartbeat's stop list. */
export function cancelJob(ctx: SchedulerContext) {
  return async ({ caller, body }: z.infer<typeof JobRefCommand>): Promise<JobPayload> => {
    return { job: publicJob(await cancelJobAt(ctx, jobKey(caller.app_id, caller.business_id, body.job_id))) };
  };
}
