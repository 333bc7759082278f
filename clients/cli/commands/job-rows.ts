import type { CliContext } from "../context.js";
import { stateText, table, timeText } from "../output.js";

export type JobRow = {
  job_id: string;
  name: string | null;
  state: string;
  pool_id: string;
  attempt: number;
  exit_code: number | null;
  created_at: string;
  pending_reason?: string | null;
};

export function jobRows(ctx: CliContext, jobs: JobRow[]): string {
  return table(
    ["JOB", "STATE", "POOL", "ATTEMPT", "EXIT", "CREATED", "NAME"],
    jobs.map((job) => [
      job.job_id,
      stateText(ctx.colors, job.state) + (job.pending_reason ? ctx.colors.dim(` (${job.pending_reason})`) : ""),
      job.pool_id,
      String(job.attempt),
      job.exit_code === null ? "-" : String(job.exit_code),
      timeText(job.created_at),
      job.name ?? "",
    ]),
    ctx.colors,
  );
}
