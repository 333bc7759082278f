import type { MeteringMessage, MeteringReason } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { encodeJson, subjects, type Versioned } from "../../../shared/nats/index.js";
import { isOperatorPoolKey, type JobRecord } from "../../../shared/records/index.js";
import { type SchedulerContext } from "../scheduler-context.js";
import { changeJob } from "./change-job.js";

const PUBLISH_TRIES = 3;

/**
 * An attempt on an operator pool that ran, ending now: charged, so billing must hear of it. A
 * running one; or an assigned one whose start the change writes with its end (decision 0095).
 */
function isMetered(before: JobRecord, after: JobRecord): boolean {
  if (!isOperatorPoolKey(before.pool_key)) return false;
  return before.state === "running" || (before.state === "assigned" && after.started_at !== null);
}

/**
 * Publishes the metering message of a running attempt on an operator pool, durably, before
 * the change that ends it. A message can then never be missing for an end that happened;
 * one whose change lost its race is settled by billing reading the record. The same
 * attempt and reason keep one message id, so a repeat within the stream's duplicate window
 * is stored once.
 */
async function publishMetering(
  ctx: SchedulerContext,
  jobKey: string,
  job: JobRecord,
  reason: MeteringReason,
): Promise<void> {
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
  throw new AppError("service.unavailable", "The job could not be changed right now; nothing changed, try again.", {
    retryAfterSeconds: 1,
    cause: lastError,
  });
}

/**
 * `changeJob` for a transition that may end an attempt (a result, a timeout, a cancel): when
 * the job is running on an operator pool, its metering message goes first, and the change is
 * written on the revision it was published for. A record that moved meanwhile is read again
 * and checked afresh (another running attempt gets its own message first). `known`: the
 * record as the caller just read it, where the first try starts.
 */
export async function endAttempt(
  ctx: SchedulerContext,
  jobKey: string,
  reason: MeteringReason,
  transition: (job: JobRecord) => JobRecord,
  known?: Versioned<JobRecord>,
): Promise<{ before: JobRecord; after: JobRecord }> {
  let announced: number | null = null;
  return changeJob(
    ctx,
    jobKey,
    async (job) => {
      // A change the record refuses (a stale result, say) is refused before anything is published.
      const after = transition(job);
      if (isMetered(job, after) && job.attempt !== announced) {
        await publishMetering(ctx, jobKey, job, reason);
        announced = job.attempt;
      }
      return after;
    },
    known,
  );
}
