import type { z } from "zod";
import type {
  DeliveredAttempt,
  DeliveredCommand,
  DeliveredReply,
  PollCommand,
  PollReply,
  RunningAttempt,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { AllocatedAttempt, AllocationRecord } from "../../../shared/records/index.js";
import type { Versioned } from "../../../shared/nats/index.js";
import { type SchedulerContext } from "../scheduler-context.js";
import { changeJob } from "./change-job.js";
import type { PendingStart } from "./deferred-starts.js";
import { deliveredAttempt } from "./delivered-attempt.js";
import { findJobKey } from "./find-job-key.js";
import { start } from "./transitions.js";

/**
 * The node's current attempts. Delivering an assigned attempt is what starts it (`running`),
 * written a moment later unless its result comes first and writes it with the end (decision
 * 0095); polling again returns the same attempts, so a lost answer costs nothing. The wait of a
 * long poll happens in the gateway. The node's reservations come from `reservationsOf`.
 *
 * A poll that names the attempts the node runs (`known`) gets only the others, and in
 * `held` every attempt the record still gives the node: a known attempt costs no read of
 * its job, and one the service ended (cancelled, timed out, requeued) is missing from
 * `held`. Without `known` (an earlier agent) every attempt's job is read and returned.
 */
export function poll(ctx: SchedulerContext) {
  return async ({ caller, body }: z.infer<typeof PollCommand>): Promise<PollReply> => {
    const allocation = await reservationsOf(ctx, caller.node_id);
    const reserved = Object.entries(allocation?.value.attempts ?? {});
    const known = body.known && new Set(body.known.map(attemptKey));
    const fresh = known
      ? reserved.filter(([jobId, { attempt }]) => !known.has(attemptKey({ job_id: jobId, attempt })))
      : reserved;
    const delivered = (await Promise.all(fresh.map(([, attempt]) => deliver(ctx, caller.node_id, attempt)))).filter(
      (job) => job !== null,
    );
    if (!known) return { jobs: delivered };
    const held = [
      ...reserved
        .filter(([jobId, { attempt }]) => known.has(attemptKey({ job_id: jobId, attempt })))
        .map(([jobId, { attempt }]) => ({ job_id: jobId, attempt })),
      ...delivered.map(({ job_id, attempt }) => ({ job_id, attempt })),
    ];
    return { jobs: delivered, held };
  };
}

/**
 * A gateway answered the node's poll from the attempt its `assigned` event carried
 * (decision 0096): the start is held from now, exactly as if a poll had delivered it, so
 * the job reads `running` from the time the node was given it. An attempt no longer the
 * node's holds nothing: the node's next poll finds it missing from `held`.
 */
export function delivered(ctx: SchedulerContext) {
  return async ({ caller, body }: z.infer<typeof DeliveredCommand>): Promise<DeliveredReply> => {
    const jobKey = await findJobKey(ctx, caller.node_id, body.job_id);
    if (jobKey === null) return { held: false };
    return { held: (await deliver(ctx, caller.node_id, { job_key: jobKey, attempt: body.attempt })) !== null };
  };
}

/**
 * The node's allocation record: the view's copy while this replica is the only one holding
 * partitions, so the only one placing (it learnt each of its reservations when the write
 * landed, and a replica that joins places nothing before this one sees it and gives it
 * partitions); else read, since the view may not have seen another replica's placement
 * yet. A busy node polls about once per job, so the read was one JetStream request per job.
 */
async function reservationsOf(ctx: SchedulerContext, nodeId: string): Promise<Versioned<AllocationRecord> | null> {
  const holders = ctx.ownership.holders();
  if (holders.size === 1 && holders.has(ctx.instance)) return ctx.view.allocations.get(nodeId) ?? null;
  return ctx.store.allocations.get(nodeId);
}

function attemptKey({ job_id, attempt }: RunningAttempt): string {
  return `${job_id}#${attempt}`;
}

/** The attempt as the node runs it, started now if it was only assigned; null when it is not the node's to run. */
async function deliver(
  ctx: SchedulerContext,
  nodeId: string,
  reserved: Pick<AllocatedAttempt, "job_key" | "attempt">,
): Promise<DeliveredAttempt | null> {
  // The owner's copy of this very attempt saves the read (the replica that assigned it, most often).
  const latest = ctx.active.latest(reserved.job_key);
  const stored =
    latest?.value.attempt === reserved.attempt && latest.value.node_id === nodeId
      ? latest
      : await ctx.store.jobs.get(reserved.job_key);
  if (!stored || stored.value.node_id !== nodeId || stored.value.attempt !== reserved.attempt) return null;
  let job = stored.value;
  if (job.state === "assigned" && ctx.config.CJS_START_WRITE_DELAY_MS > 0) {
    ctx.starts.defer(reserved.job_key, { attempt: reserved.attempt, nodeId, startedAtMs: ctx.clock.now() });
    return deliveredAttempt(job);
  }
  if (job.state === "assigned") {
    try {
      job = (
        await changeJob(
          ctx,
          reserved.job_key,
          (record) => start(record, reserved.attempt, nodeId, ctx.clock.now()),
          stored,
        )
      ).after;
    } catch (error) {
      if (error instanceof AppError) return null;
      throw error;
    }
  }
  if (job.state !== "running") return null;
  return deliveredAttempt(job);
}

/**
 * Writes the held start of an attempt a poll gave its node (`DeferredStarts`), at the time
 * the node was given it. A job that moved on meanwhile (ended, cancelled, requeued) keeps
 * its record; a write that fails leaves the start to the attempt's result.
 */
export async function writeStart(ctx: SchedulerContext, jobKey: string, pending: PendingStart): Promise<void> {
  const latest = ctx.active.latest(jobKey);
  const known = latest?.value.attempt === pending.attempt && latest.value.state === "assigned" ? latest : undefined;
  try {
    await changeJob(
      ctx,
      jobKey,
      (record) => start(record, pending.attempt, pending.nodeId, pending.startedAtMs),
      known,
    );
  } catch (error) {
    if (error instanceof AppError) return;
    ctx.logger.warn(
      { err: error, job_key: jobKey, attempt: pending.attempt },
      "the start of a delivered attempt was not written; its result will write it",
    );
  }
}
