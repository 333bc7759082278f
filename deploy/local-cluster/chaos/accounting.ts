/**
 * The soak's verdict from what it recorded: every submit and its answer, every job as the
 * service finally reports it, what the agents say they received, the ledger's debits.
 * Pure, so the classification is tested on made-up records.
 */
import { isTerminal, type JobEvent, type JobState } from "../../../shared/contract/index.js";
import { chargedAttempts } from "../../../services/billing/metering/charge.js";

/** One submit the soak sent. */
export interface Submission {
  seq: number;
  sentAtMs: number;
  /** The job id the gateway answered with; null when the submit failed (then `error` says how). */
  jobId: string | null;
  error: string | null;
}

/** A job as `jobs/retrieve` finally showed it; null when the service does not know it. */
export interface FinalJob {
  job_id: string;
  state: JobState;
  attempt: number;
  /** The pool key billing sees (`op.…` for the operator pools the soak uses). */
  pool_key: string;
  finished_at: string | null;
  timeline: readonly JobEvent[];
}

export interface Debit {
  job_id: string;
  attempt: number;
}

/** One `job received` line of an agent's log: an attempt handed to a node to run. */
export interface Delivery {
  job_id: string;
  attempt: number;
}

export interface Problem {
  job_id: string;
  why: string;
}

export interface SoakAccount {
  submitted: number;
  acknowledged: number;
  /** Submits answered with an error, by code: the client knows they were not taken. */
  refused: Record<string, number>;
  terminal: number;
  byState: Partial<Record<JobState, number>>;
  /** Acknowledged, but unknown to the service or not terminal at the end. */
  lost: Problem[];
  /** An attempt that started (or was delivered) twice, or a job that succeeded twice. */
  doubled: Problem[];
  /** Attempts billing must charge (they ran on an operator pool and ended after starting). */
  chargeable: number;
  chargedOnce: number;
  /** A chargeable attempt without a debit. */
  uncharged: Problem[];
  /** Two debits for one attempt, or a debit for an attempt that must be free. */
  overcharged: Problem[];
}

function count<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

const attemptKey = (jobId: string, attempt: number) => `${jobId}#${attempt}`;

/** Why a job ran more than it may: an attempt started or delivered twice, or two successes. Null when it did not. */
export function doubledRun(job: FinalJob, deliveries: ReadonlyMap<string, number>): string | null {
  const starts = count(
    job.timeline.filter((event) => event.state === "running"),
    (event) => String(event.attempt),
  );
  for (const [attempt, times] of starts) if (times > 1) return `attempt ${attempt} started ${times} times`;
  for (let attempt = 1; attempt <= job.attempt; attempt++) {
    const times = deliveries.get(attemptKey(job.job_id, attempt)) ?? 0;
    if (times > 1) return `attempt ${attempt} was delivered to agents ${times} times`;
  }
  const successes = job.timeline.filter((event) => event.state === "succeeded").length;
  if (successes > 1) return `succeeded ${successes} times`;
  return null;
}

export function account(
  submissions: readonly Submission[],
  finals: ReadonlyMap<string, FinalJob | null>,
  debits: readonly Debit[],
  deliveries: readonly Delivery[],
): SoakAccount {
  const acknowledged = submissions.filter((submission) => submission.jobId !== null);
  const refused: Record<string, number> = {};
  for (const submission of submissions)
    if (submission.jobId === null)
      refused[submission.error ?? "unknown"] = (refused[submission.error ?? "unknown"] ?? 0) + 1;
  const debitCounts = count(debits, (debit) => attemptKey(debit.job_id, debit.attempt));
  const deliveryCounts = count(deliveries, (delivery) => attemptKey(delivery.job_id, delivery.attempt));
  const result: SoakAccount = {
    submitted: submissions.length,
    acknowledged: acknowledged.length,
    refused,
    terminal: 0,
    byState: {},
    lost: [],
    doubled: [],
    chargeable: 0,
    chargedOnce: 0,
    uncharged: [],
    overcharged: [],
  };
  for (const { jobId } of acknowledged) {
    const job = finals.get(jobId!);
    if (!job) {
      result.lost.push({ job_id: jobId!, why: "unknown to the service" });
      continue;
    }
    result.byState[job.state] = (result.byState[job.state] ?? 0) + 1;
    if (!isTerminal(job.state)) {
      result.lost.push({ job_id: job.job_id, why: `still ${job.state} at the end` });
      continue;
    }
    result.terminal += 1;
    const doubled = doubledRun(job, deliveryCounts);
    if (doubled) result.doubled.push({ job_id: job.job_id, why: doubled });
    const charged = new Set(chargedAttempts(job).map((entry) => entry.attempt));
    for (let attempt = 1; attempt <= job.attempt; attempt++) {
      const times = debitCounts.get(attemptKey(job.job_id, attempt)) ?? 0;
      if (charged.has(attempt)) {
        result.chargeable += 1;
        if (times === 1) result.chargedOnce += 1;
        else if (times === 0) result.uncharged.push({ job_id: job.job_id, why: `attempt ${attempt} has no debit` });
        else result.overcharged.push({ job_id: job.job_id, why: `attempt ${attempt} has ${times} debits` });
      } else if (times > 0) {
        result.overcharged.push({
          job_id: job.job_id,
          why: `attempt ${attempt} must be free but has ${times} debit${times === 1 ? "" : "s"}`,
        });
      }
    }
  }
  return result;
}

/** The soak fails on any lost, doubled, uncharged or overcharged job. */
export function passed(result: SoakAccount): boolean {
  return (
    result.lost.length === 0 &&
    result.doubled.length === 0 &&
    result.uncharged.length === 0 &&
    result.overcharged.length === 0
  );
}

/** One injected fault, as the soak timed it. */
export interface FaultTiming {
  target: string;
  killedAtMs: number;
  restartedAtMs: number | null;
  /** When the restarted process answered its readiness probe again. */
  readyAtMs: number | null;
  error: string | null;
}

export interface FaultRecovery {
  target: string;
  /** Kill to the restarted process ready. */
  readyMs: number | null;
  /** Kill to the first success of a job submitted after the kill: how long the service, as a user sees it, was interrupted. */
  firstSuccessMs: number | null;
  /** The later of the two: the fault's recovery time. */
  recoveryMs: number | null;
}

/**
 * A fault's recovery: from the kill until both the restarted process is ready and a job
 * submitted after the kill has succeeded. Null parts when either never happened.
 */
export function recoveryOf(
  fault: FaultTiming,
  submissions: readonly Submission[],
  finals: ReadonlyMap<string, FinalJob | null>,
): FaultRecovery {
  let firstSuccessAt: number | null = null;
  for (const submission of submissions) {
    if (submission.jobId === null || submission.sentAtMs < fault.killedAtMs) continue;
    const job = finals.get(submission.jobId);
    if (job?.state !== "succeeded" || job.finished_at === null) continue;
    const at = Date.parse(job.finished_at);
    if (firstSuccessAt === null || at < firstSuccessAt) firstSuccessAt = at;
  }
  const readyMs = fault.readyAtMs === null ? null : fault.readyAtMs - fault.killedAtMs;
  const firstSuccessMs = firstSuccessAt === null ? null : Math.max(0, firstSuccessAt - fault.killedAtMs);
  return {
    target: fault.target,
    readyMs,
    firstSuccessMs,
    recoveryMs: readyMs === null || firstSuccessMs === null ? null : Math.max(readyMs, firstSuccessMs),
  };
}
