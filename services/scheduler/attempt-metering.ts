import type { MeteringMessage, MeteringReason } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { encodeJson, subjects } from "../../shared/nats/index.js";
import type { JobRecord } from "../../shared/records/index.js";
import { changeJob, type SchedulerContext } from "./scheduler-context.js";

const PUBLISH_TRIES = 3;
const CHANGE_TRIES = 5;

/** A running attempt on an operator pool: ending it is charged, so billing must hear of it. */
function isMetered(job: JobRecord): boolean {
  return job.state === "running" && job.pool_key.startsWith("op.");
}

/** The end of an attempt moved under us: publish for the attempt that is running now, then try again. */
class MeteredAttemptMoved extends Error {}

/**
 * Publishes the metering message of a running attempt on an operator pool, durably, before
 * the change that ends it. A message can then never be missing for an end that happened;
 * one whose change lost its race is settled by billing reading the record. The same
 * attempt and reason keep one message id, so a repeat within the stream's duplicate window
 * is stored once.
 */
async function publishMetering(ctx: SchedulerContext, jobKey: string, job: JobRecord, reason: MeteringReason): Promise<void> {
  const message: MeteringMessage = { job_key: jobKey, job_id: job.job_id, attempt: job.attempt, reason };
  const msgID = `${job.job_id}.${job.attempt}.${reason}`;
  let lastError: unknown;
  for (let tryNumber = 1; tryNumber <= PUBLISH_TRIES; tryNumber += 1) {
    try {
      await ctx.store.js.publish(subjects.metering(job.job_id), encodeJson(message), { msgID, timeout: 5000 });
      return;
    } catch (error) {
      lastError = error;
    }
  }
  throw new AppError("service.unavailable", "The job could not be changed right now; nothing changed, try again.", { retryAfterSeconds: 1, cause: lastError });
}

/**
 * `changeJob` for a transition that may end an attempt (a result, a timeout, a cancel): when
 * the job is running on an operator pool, its metering message goes first, and the change
 * applies only while that same attempt is the one running.
 */
export async function endAttempt(
  ctx: SchedulerContext,
  jobKey: string,
  reason: MeteringReason,
  transition: (job: JobRecord) => JobRecord,
): Promise<{ before: JobRecord; after: JobRecord }> {
  for (let tryNumber = 1; ; tryNumber += 1) {
    const current = (await ctx.store.jobs.get(jobKey))?.value;
    if (!current) throw new AppError("resource.not_found", "No such job.");
    const announced = isMetered(current) ? current.attempt : null;
    if (announced !== null) {
      // A change the record refuses (a stale result, say) is refused before anything is published.
      transition(current);
      await publishMetering(ctx, jobKey, current, reason);
    }
    try {
      return await changeJob(ctx, jobKey, (job) => {
        if (isMetered(job) && job.attempt !== announced) throw new MeteredAttemptMoved();
        return transition(job);
      });
    } catch (error) {
      if (!(error instanceof MeteredAttemptMoved)) throw error;
      if (tryNumber >= CHANGE_TRIES) throw new AppError("service.unavailable", "The job is changing fast; try again.", { retryAfterSeconds: 1 });
    }
  }
}
