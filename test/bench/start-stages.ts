import type { Job } from "../../shared/contract/index.js";
import { percentile } from "./stats.js";

/** The stages of one job's submit → start, in ms, from the client's clock and the job's own timeline. */
export interface StartStages {
  /** From the submit's intended time to the job's `queued_at` (HTTP, the gateway, the scheduler's write). */
  submitToQueued: number;
  /** `queued_at` → the timeline's `assigned` (placement). */
  queuedToAssigned: number;
  /** `assigned` → `started_at` (the node's poll is woken and asks; `started_at` is when it was given the job, decision 0095). */
  assignedToStarted: number;
  /** `started_at` → the node received it (the poll's answer back through the gateway). */
  startedToReceived: number;
  /** The whole submit → start, as the bench measures it. */
  total: number;
  /** When in its step the job was due, ms from the step's first due submit. */
  dueInStep: number;
}

export const STAGE_NAMES = {
  submitToQueued: "submit → queued_at (HTTP, gateway, scheduler's write)",
  queuedToAssigned: "queued_at → assigned (placement)",
  assignedToStarted: "assigned → started_at (poll woken, node given it)",
  startedToReceived: "started_at → node received it (poll answered)",
} as const satisfies Partial<Record<keyof StartStages, string>>;

/**
 * One job's stages, with the bench's times on the wall clock (the services stamp the
 * timeline with it, to the millisecond): undefined for a job whose timeline lacks a stage.
 */
export function startStages(
  job: Pick<Job, "queued_at" | "started_at" | "timeline">,
  dueAtWallMs: number,
  receivedAtWallMs: number,
  stepStartWallMs: number,
): StartStages | undefined {
  const assigned = job.timeline.find((event) => event.state === "assigned");
  if (job.started_at === null || assigned === undefined) return undefined;
  const queued = Date.parse(job.queued_at);
  const assignedAt = Date.parse(assigned.at);
  const started = Date.parse(job.started_at);
  return {
    submitToQueued: queued - dueAtWallMs,
    queuedToAssigned: assignedAt - queued,
    assignedToStarted: started - assignedAt,
    startedToReceived: receivedAtWallMs - started,
    total: receivedAtWallMs - dueAtWallMs,
    dueInStep: dueAtWallMs - stepStartWallMs,
  };
}

export interface StageSummary {
  /** Per stage: its p50 over the jobs, and its mean over the slowest 1 % (at least one job) by total. */
  stages: Record<keyof typeof STAGE_NAMES, { p50: number; slowestMean: number }>;
  /** The slowest 1 %'s totals, and when in the step they were due (ms). */
  slowest: Array<{ total: number; dueInStep: number }>;
}

/**
 * Where the jobs' time went, and where the slowest `slowestCount` (1 % of them unless
 * given: a sample that holds the slowest 1 % of more jobs says how many that is) did.
 */
export function summariseStages(
  jobs: readonly StartStages[],
  slowestCount = Math.ceil(jobs.length / 100),
): StageSummary | undefined {
  if (jobs.length === 0) return undefined;
  const byTotal = [...jobs].sort((a, b) => b.total - a.total);
  const slowest = byTotal.slice(0, Math.max(1, slowestCount));
  const stages = Object.fromEntries(
    (Object.keys(STAGE_NAMES) as Array<keyof typeof STAGE_NAMES>).map((stage) => {
      const sorted = jobs.map((job) => job[stage]).sort((a, b) => a - b);
      const slowestMean = slowest.reduce((sum, job) => sum + job[stage], 0) / slowest.length;
      return [stage, { p50: percentile(sorted, 50), slowestMean }];
    }),
  ) as StageSummary["stages"];
  return { stages, slowest: slowest.map(({ total, dueInStep }) => ({ total, dueInStep })) };
}
