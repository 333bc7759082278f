import type { JobEvent, JobState, JobSummary } from "../../../shared/contract/index.js";

/**
 * How long a job waited and ran, and what each attempt did, from the job's own times and
 * timeline. `nowMs` stands in for the end of what has not ended, so a running job's
 * figures grow as the page's clock ticks. The browser's clock may trail the service's a
 * little: nothing here is ever below zero.
 */
type Times = Pick<JobSummary, "queued_at" | "started_at" | "finished_at">;

function span(fromIso: string, toMs: number): number {
  return Math.max(0, toMs - Date.parse(fromIso));
}

/** From its last queueing to its start; to its end when it ended unstarted; still counting while it waits. */
export function queuedForMs(job: Times, nowMs: number): number {
  const end = job.started_at ?? job.finished_at;
  return span(job.queued_at, end === null ? nowMs : Date.parse(end));
}

/** The current (or last) attempt's run, from its start to its end or now; null before it started. */
export function ranForMs(job: Times, nowMs: number): number | null {
  if (job.started_at === null) return null;
  return span(job.started_at, job.finished_at === null ? nowMs : Date.parse(job.finished_at));
}

/** One assignment of the job to a node, and how it ended. */
export interface AttemptSummary {
  attempt: number;
  node_id: string | null;
  assigned_at: string;
  started_at: string | null;
  ended_at: string | null;
  /** The state the attempt ended the job in, `queued` when its node was lost and the job requeued; null while it lasts. */
  outcome: JobState | null;
  /** The timeline's word for the end (`exited`, `node_lost`, …). */
  reason: string | null;
  exit_code: number | null;
  error: JobEvent["error"];
}

const ENDS_AN_ATTEMPT = new Set(["succeeded", "failed", "timed_out", "cancelled"]);

/** The attempts of a job, oldest first, read from its timeline. */
export function attemptsOf(timeline: readonly JobEvent[]): AttemptSummary[] {
  const attempts: AttemptSummary[] = [];
  for (const event of timeline) {
    const current = attempts.at(-1);
    if (event.state === "assigned") {
      attempts.push({
        attempt: event.attempt,
        node_id: event.node_id,
        assigned_at: event.at,
        started_at: null,
        ended_at: null,
        outcome: null,
        reason: null,
        exit_code: null,
        error: null,
      });
      continue;
    }
    if (current === undefined || current.ended_at !== null || event.attempt !== current.attempt) continue;
    if (event.state === "running") current.started_at = event.at;
    // A requeue of a running attempt (its node lost, a reservation repaired) ends it too.
    else if (ENDS_AN_ATTEMPT.has(event.state) || event.state === "queued") {
      current.ended_at = event.at;
      current.outcome = event.state;
      current.reason = event.reason;
      current.exit_code = event.exit_code ?? null;
      current.error = event.error ?? null;
    }
  }
  return attempts;
}

/** A stretch of time the job spent in one state. */
export interface Segment {
  state: JobState;
  reason: string;
  attempt: number;
  from: string;
  ms: number;
}

/** The states the job went through, each with how long it stayed, up to its end or `nowMs`; the terminal state last, with 0 ms. */
export function segmentsOf(timeline: readonly JobEvent[], nowMs: number): Segment[] {
  return timeline.map((event, index) => {
    const next = timeline[index + 1];
    const ended = next === undefined && ENDS_AN_ATTEMPT.has(event.state);
    const ms = ended ? 0 : span(event.at, next === undefined ? nowMs : Date.parse(next.at));
    return { state: event.state, reason: event.reason, attempt: event.attempt, from: event.at, ms };
  });
}
