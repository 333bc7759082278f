import type { JobEvent, JobState, PlanRates, Resources } from "../../../shared/contract/index.js";
import { isOperatorPoolKey } from "../../../shared/records/index.js";

const MS_PER_HOUR = 3_600_000;
const MB_PER_GB = 1024;
const MICROS_PER_CREDIT = 1_000_000;

/** What the job record says about one attempt. */
export type AttemptEnd =
  /** Still assigned or running: the change that ends it may be in flight. */
  | { status: "open" }
  /** The record holds no trace of the attempt (its events left the timeline). */
  | { status: "unknown" }
  /** Ended, and the customer owes nothing: it never started, its node was lost, or it ran on the business's own pool. */
  | { status: "free"; why: "never_started" | "node_lost" | "self_hosted" }
  /** Ended after it started, on an operator pool: charged for the time between. */
  | { status: "charged"; outcome: JobState; started_at: string; ended_at: string; wall_ms: number };

export type ChargedEnd = Extract<AttemptEnd, { status: "charged" }>;

export interface JobView {
  pool_key: string;
  state: JobState;
  attempt: number;
  timeline: readonly JobEvent[];
}

const ENDING_STATES: readonly JobState[] = ["succeeded", "failed", "timed_out", "cancelled"];

/**
 * How `attempt` of a job ended, from its record's timeline: from the attempt's `running`
 * event (the delivering poll) to the event that ended it. Node loss and a cancel before
 * the start are the service's cost, never the customer's.
 */
export function attemptEnd(job: JobView, attempt: number): AttemptEnd {
  if (job.attempt === attempt && (job.state === "assigned" || job.state === "running")) return { status: "open" };
  const events = job.timeline;
  const assignedAt = events.findIndex((event) => event.attempt === attempt && event.state === "assigned");
  const startedAt = events.findIndex((event) => event.attempt === attempt && event.state === "running");
  const from = startedAt >= 0 ? startedAt : assignedAt;
  if (from < 0) return { status: "unknown" };
  const end = events
    .slice(from + 1)
    .find(
      (event) => event.attempt === attempt && (event.reason === "node_lost" || ENDING_STATES.includes(event.state)),
    );
  if (!end) return job.attempt === attempt ? { status: "open" } : { status: "unknown" };
  if (!isOperatorPoolKey(job.pool_key)) return { status: "free", why: "self_hosted" };
  if (end.reason === "node_lost") return { status: "free", why: "node_lost" };
  const start = events[startedAt];
  if (startedAt < 0 || !start) return { status: "free", why: "never_started" };
  const wallMs = Math.max(0, Date.parse(end.at) - Date.parse(start.at));
  return { status: "charged", outcome: end.state, started_at: start.at, ended_at: end.at, wall_ms: wallMs };
}

/** The attempts of a job record that ended in a chargeable way, oldest first: `attemptEnd`'s rule over each. */
export function chargedAttempts(job: JobView): Array<{ attempt: number; end: ChargedEnd }> {
  const charged: Array<{ attempt: number; end: ChargedEnd }> = [];
  for (let attempt = 1; attempt <= job.attempt; attempt += 1) {
    const end = attemptEnd(job, attempt);
    if (end.status === "charged") charged.push({ attempt, end });
  }
  return charged;
}

/**
 * The charge of a run, in whole micro-credits: wall hours × (cores × the core-hour rate +
 * GB of memory × the GB-hour rate + GPUs × the GPU-hour rate), rounded to the nearest
 * micro-credit.
 */
export function chargeMicros(wallMs: number, resources: Resources, rates: PlanRates): number {
  const perHour =
    resources.cpu * rates.cpu_core_hour +
    (resources.memory_mb / MB_PER_GB) * rates.memory_gb_hour +
    resources.gpu * rates.gpu_hour;
  return Math.round((wallMs * perHour * MICROS_PER_CREDIT) / MS_PER_HOUR);
}
