import { AppError } from "../../../shared/errors/index.js";
import { parseJobKey } from "../../../shared/records/index.js";
import type { JobRevision, JobRevisionListener } from "../partitions/job-revision.js";
import { queueDeadlineMs, type QueueDeadlineFields } from "./queue-deadline.js";
import { type SchedulerContext } from "../scheduler-context.js";
import { changeJob } from "../jobs/change-job.js";
import { expireInQueue } from "../jobs/transitions.js";

/**
 * The queued jobs that have a queue timeout and have not started yet, and when each must
 * have started, kept from the replica's job watch. A job without `queue_timeout_seconds`
 * costs one property check per revision.
 */
export class QueueDeadlines implements JobRevisionListener {
  readonly #jobs = new Map<string, { revision: number; deadlineMs: number }>();

  apply({ key, revision, record }: JobRevision): void {
    if (typeof record?.queue_timeout_seconds !== "number") {
      if (this.#jobs.size > 0) this.#jobs.delete(key);
      return;
    }
    const known = this.#jobs.get(key);
    if (known && known.revision >= revision) return;
    const deadlineMs =
      record.state === "queued" && Array.isArray(record.timeline)
        ? queueDeadlineMs(record as unknown as QueueDeadlineFields)
        : null;
    if (deadlineMs === null || Number.isNaN(deadlineMs)) this.#jobs.delete(key);
    else this.#jobs.set(key, { revision, deadlineMs });
  }

  dropPartition(partition: number): void {
    for (const key of [...this.#jobs.keys()]) if (parseJobKey(key)?.partition === partition) this.#jobs.delete(key);
  }

  get size(): number {
    return this.#jobs.size;
  }

  /** The keys of the jobs whose deadline has passed at `nowMs`. */
  due(nowMs: number): string[] {
    const due: string[] = [];
    for (const [key, { deadlineMs }] of this.#jobs) if (deadlineMs <= nowMs) due.push(key);
    return due;
  }
}

/**
 * Cancels every queued job past its queue timeout, each by compare-and-set: the transition
 * checks the record afresh, so a job that started meanwhile, or one another replica
 * cancelled, is left alone. How many were cancelled.
 */
export async function expireQueuedOnce(ctx: SchedulerContext, deadlines: QueueDeadlines): Promise<number> {
  let expired = 0;
  for (const key of deadlines.due(ctx.clock.now())) {
    try {
      const { after } = await changeJob(ctx, key, (job) => expireInQueue(job, ctx.clock.now()));
      ctx.logger.info({ job_id: after.job_id }, "job not started within its queue timeout: cancelled");
      expired += 1;
    } catch (error) {
      // Started, cancelled or deleted meanwhile: its next revision takes it out of the index.
      if (!(error instanceof AppError)) throw error;
    }
  }
  return expired;
}
