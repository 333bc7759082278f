import type { z } from "zod";
import type { Job, SubmitJobRequest } from "./jobs.js";

/**
 * The metadata key that links a job made by "run again" to the job it repeats
 * (docs/decisions/0075-run-again-links-by-metadata.md): `jobs/list` finds a job's runs
 * again with `metadata: "rerun_of=<job id>"`.
 */
export const RERUN_OF_KEY = "rerun_of";

/**
 * A submit of the same work as `job`, to run now: its spec as submitted (defaults filled
 * in), with `metadata.rerun_of` naming it. Left out are what belonged to that one run:
 * `run_at` (its time has passed) and `depends_on` (those jobs have ended; a failed one
 * would cancel the new job at once).
 */
export function rerunRequest(job: Job): z.input<typeof SubmitJobRequest> {
  return {
    type: job.type,
    command: job.command,
    env: job.env,
    resources: job.resources,
    timeout_seconds: job.timeout_seconds,
    pool_id: job.pool_id,
    labels: job.labels,
    priority: job.priority,
    ...(job.name === null ? {} : { name: job.name }),
    metadata: { ...job.metadata, [RERUN_OF_KEY]: job.job_id },
    max_attempts: job.max_attempts,
    ...(job.retry === null ? {} : { retry: job.retry }),
    ...(job.queue_timeout_seconds === null ? {} : { queue_timeout_seconds: job.queue_timeout_seconds }),
    ...(job.concurrency === null ? {} : { concurrency: job.concurrency }),
  };
}
