import type { JobError, JobEvent, JobState, JobUsage } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import { queueDeadlineMs } from "../queue/queue-deadline.js";
import { backoffMs, retryMatches } from "./retry-policy.js";

/**
 * Every change of a job's state, one function each. Each checks its allowed source states
 * and returns the next record with a timeline event; the caller writes it by compare-and-set.
 */

const MAX_TIMELINE = 200;

let lastIsoMs = Number.NaN;
let lastIso = "";

/** The time as the records write it; one transition writes the same instant several times, so the last is kept. */
function iso(now: number): string {
  if (now !== lastIsoMs) [lastIsoMs, lastIso] = [now, new Date(now).toISOString()];
  return lastIso;
}

function conflict(job: JobRecord, operation: string): AppError {
  return new AppError("state.conflict", `Cannot ${operation} a job that is ${job.state}.`, {
    details: { state: job.state, job_id: job.job_id },
  });
}

function withEvent(
  job: JobRecord,
  now: number,
  next: Partial<JobRecord> & { state: JobState },
  reason: string,
  extra: Pick<JobEvent, "exit_code" | "error" | "next_attempt_at"> = {},
): JobRecord {
  const updated: JobRecord = { ...job, ...next, updated_at: iso(now) };
  const event: JobEvent = {
    at: iso(now),
    state: updated.state,
    attempt: updated.attempt,
    reason,
    node_id: updated.node_id,
    ...extra,
  };
  const timeline = [...job.timeline, event];
  // A job requeued many times keeps its first event and the most recent ones.
  updated.timeline =
    timeline.length > MAX_TIMELINE ? [timeline[0] as JobEvent, ...timeline.slice(-(MAX_TIMELINE - 1))] : timeline;
  return updated;
}

export function assign(job: JobRecord, nodeId: string, now: number): JobRecord {
  if (job.state !== "queued") throw conflict(job, "assign");
  return withEvent(
    job,
    now,
    { state: "assigned", attempt: job.attempt + 1, node_id: nodeId, pending_reason: null, next_attempt_at: null },
    "assigned",
  );
}

/** The node took the attempt (its poll delivered it): the clock of the timeout starts. */
export function start(job: JobRecord, attempt: number, nodeId: string, now: number): JobRecord {
  if (job.state !== "assigned" || job.attempt !== attempt || job.node_id !== nodeId) throw staleAttempt(job, attempt);
  return withEvent(
    job,
    now,
    { state: "running", started_at: iso(now), deadline_at: iso(now + job.timeout_seconds * 1000) },
    "started",
  );
}

export interface RunResult {
  outcome: "succeeded" | "failed";
  exit_code: number | null;
  error?: JobError | undefined;
  usage?: JobUsage | undefined;
}

/** An assigned attempt its node was given at `givenAtMs` (its start held, decision 0095), started then; any other record as it is. */
export function startGiven(job: JobRecord, givenAtMs: number | undefined): JobRecord {
  if (job.state !== "assigned" || givenAtMs === undefined || job.node_id === null) return job;
  return start(job, job.attempt, job.node_id, givenAtMs);
}

/**
 * The node's result for an attempt it was given: an attempt whose start is not written yet
 * (decision 0095) starts at `startedAtMs` and ends, in one change; a running one ends.
 */
export function finishGiven(
  job: JobRecord,
  attempt: number,
  nodeId: string,
  result: RunResult,
  startedAtMs: number,
  now: number,
): JobRecord {
  const running = job.state === "assigned" ? start(job, attempt, nodeId, Math.min(startedAtMs, now)) : job;
  return finish(running, attempt, nodeId, result, now);
}

/** The node's terminal result for the current attempt; a failure the job's retry policy matches is retried after its backoff. */
export function finish(
  job: JobRecord,
  attempt: number,
  nodeId: string,
  result: RunResult,
  now: number,
  random: () => number = Math.random,
): JobRecord {
  if ((job.state !== "running" && job.state !== "assigned") || job.attempt !== attempt || job.node_id !== nodeId)
    throw staleAttempt(job, attempt);
  const error =
    result.error ??
    (result.outcome === "failed"
      ? { code: "job.exit_nonzero", message: `The command exited with code ${result.exit_code ?? "unknown"}.` }
      : null);
  const ended = withEvent(
    job,
    now,
    {
      state: result.outcome,
      exit_code: result.exit_code,
      error,
      usage: result.usage ?? null,
      started_at: job.started_at ?? iso(now),
      finished_at: iso(now),
      deadline_at: null,
    },
    result.outcome === "succeeded" ? "exited" : result.error ? "failed" : "exited",
    { exit_code: result.exit_code, error },
  );
  return result.outcome === "failed" ? retryOrEnd(ended, now, random) : ended;
}

export function cancel(job: JobRecord, now: number): JobRecord {
  if (job.state !== "queued" && job.state !== "assigned" && job.state !== "running") throw conflict(job, "cancel");
  const error = { code: "job.cancelled", message: "Cancelled by a user." };
  return withEvent(
    job,
    now,
    {
      state: "cancelled",
      error,
      finished_at: iso(now),
      deadline_at: null,
      pending_reason: null,
      next_attempt_at: null,
    },
    "cancelled",
    { error },
  );
}

/** A queued job that never started an attempt, past its `queue_timeout_seconds`: cancelled, never charged (it never ran). */
export function expireInQueue(job: JobRecord, now: number): JobRecord {
  const deadlineMs = job.state === "queued" ? queueDeadlineMs(job) : null;
  if (deadlineMs === null || deadlineMs > now) throw conflict(job, "expire in the queue");
  const error = { code: "job.queue_timeout", message: `Not started within ${job.queue_timeout_seconds} s.` };
  return withEvent(
    job,
    now,
    { state: "cancelled", error, finished_at: iso(now), pending_reason: null, next_attempt_at: null },
    "queue_timeout",
    { error },
  );
}

/**
 * An ended job back in the queue for another run under the same id, with a fresh budget of
 * `max_attempts` (its next assignment is the next attempt): what a retry, by hand or by
 * the retry policy, writes.
 */
function rerun(
  job: JobRecord,
  now: number,
  pendingReason: "waiting_for_scheduler" | "retry_backoff",
): Partial<JobRecord> & { state: "queued" } {
  return {
    state: "queued",
    node_id: null,
    exit_code: null,
    error: null,
    usage: null,
    started_at: null,
    finished_at: null,
    deadline_at: null,
    queued_at: iso(now),
    pending_reason: pendingReason,
    attempt_base: job.attempt,
  };
}

/** Requeues a failed or timed-out job under the same id; its next assignment is the next attempt. */
export function retry(job: JobRecord, now: number): JobRecord {
  if (job.state !== "failed" && job.state !== "timed_out") throw conflict(job, "retry");
  return withEvent(job, now, rerun(job, now, "waiting_for_scheduler"), "retried");
}

export function timeOut(job: JobRecord, now: number, random: () => number = Math.random): JobRecord {
  if (job.state !== "running") throw conflict(job, "time out");
  const error = { code: "job.timed_out", message: `The run took longer than ${job.timeout_seconds} s.` };
  return retryOrEnd(
    withEvent(job, now, { state: "timed_out", error, finished_at: iso(now), deadline_at: null }, "timed_out", {
      error,
    }),
    now,
    random,
  );
}

/** The node of the current attempt was lost: requeue, or fail once every attempt is spent. */
export function nodeLost(job: JobRecord, now: number, random: () => number = Math.random): JobRecord {
  if (job.state !== "assigned" && job.state !== "running") throw conflict(job, "requeue");
  const error = {
    code: "node.lost",
    message: `Node ${job.node_id} stopped sending heartbeats during attempt ${job.attempt}.`,
  };
  if (job.attempt - job.attempt_base >= job.max_attempts) {
    return retryOrEnd(
      withEvent(job, now, { state: "failed", error, finished_at: iso(now), deadline_at: null }, "node_lost", { error }),
      now,
      random,
    );
  }
  return withEvent(
    job,
    now,
    {
      state: "queued",
      node_id: null,
      started_at: null,
      deadline_at: null,
      queued_at: iso(now),
      pending_reason: "waiting_for_scheduler",
    },
    "node_lost",
    { error },
  );
}

/**
 * The one rule for automatic retries, applied to an attempt that has just ended `failed` or
 * `timed_out` (`ended`, its end already in the timeline, where billing reads it): when the
 * job's retry policy matches the failure and retries are left, the job goes back to the
 * queue held until its backoff ends, with a fresh `max_attempts` budget; otherwise it stays ended.
 */
function retryOrEnd(ended: JobRecord, now: number, random: () => number): JobRecord {
  const policy = ended.retry;
  const failure = { exit_code: ended.exit_code, error: ended.error };
  if (!policy || ended.retry_count >= policy.max_retries || !retryMatches(policy, failure)) return ended;
  const nextAttemptAt = iso(now + backoffMs(policy.backoff, ended.retry_count, random));
  return withEvent(
    ended,
    now,
    { ...rerun(ended, now, "retry_backoff"), next_attempt_at: nextAttemptAt, retry_count: ended.retry_count + 1 },
    "retry_scheduled",
    { ...failure, next_attempt_at: nextAttemptAt },
  );
}

export function staleAttempt(job: JobRecord, attempt: number): AppError {
  const why = job.attempt !== attempt ? `the current attempt is ${job.attempt}` : `the attempt is ${job.state}`;
  return new AppError("job.stale_attempt", `Attempt ${attempt} of this job is not running on this node: ${why}.`, {
    details: { job_id: job.job_id, attempt, current_attempt: job.attempt, state: job.state },
  });
}

/**
 * An assigned job whose node holds no reservation for its attempt (a lost write): back to
 * the queue. The attempt was the service's fault, so it does not count against `max_attempts`.
 */
export function requeueUnreserved(job: JobRecord, now: number): JobRecord {
  if (job.state !== "assigned") throw conflict(job, "requeue");
  return withEvent(
    job,
    now,
    {
      state: "queued",
      node_id: null,
      queued_at: iso(now),
      pending_reason: "waiting_for_scheduler",
      attempt_base: job.attempt_base + 1,
    },
    "reservation_missing",
  );
}

/**
 * A job of its `depends_on` succeeded: it is no longer waited for. The last one releases
 * the job to placement (timeline `released`); one of several only shortens the wait.
 */
export function releaseDependency(job: JobRecord, parentId: string, now: number): JobRecord {
  if (job.state !== "queued" || !job.waiting_on.includes(parentId)) throw conflict(job, "release");
  const waiting_on = job.waiting_on.filter((id) => id !== parentId);
  if (waiting_on.length > 0) return { ...job, waiting_on, updated_at: iso(now) };
  return withEvent(job, now, { state: "queued", waiting_on, pending_reason: "waiting_for_scheduler" }, "released");
}

/** A job of its `depends_on` failed, timed out, was cancelled or is gone: the job cannot run and ends `cancelled` (never charged). */
export function failDependency(job: JobRecord, parentId: string, parentState: string | null, now: number): JobRecord {
  if (job.state !== "queued" || !job.waiting_on.includes(parentId)) throw conflict(job, "cancel");
  const why = parentState === null ? "no longer exists" : `ended ${parentState}`;
  const error = { code: "job.dependency_failed", message: `Job ${parentId}, which this job depends on, ${why}.` };
  return withEvent(
    job,
    now,
    { state: "cancelled", error, finished_at: iso(now), deadline_at: null, pending_reason: null },
    "dependency_failed",
    { error },
  );
}
