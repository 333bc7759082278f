import type { ComputeJobsClient, LogReconnect } from "../sdk/src/index.js";
import { seconds, type CliContext } from "./context.js";
import { exitCodeOfJob } from "./exit-codes.js";
import { stateText } from "./output.js";
import { ProgressLine } from "./progress.js";

/** How long `cjs logs` without -f waits for more lines of a running job before it stops. */
const CAUGHT_UP_MS = 1500;

/**
 * Prints a job's log lines as they arrive (stdout to stdout, stderr to stderr) until the
 * job ends; answers the exit code the job stands for. Without `follow`, stops once no line
 * came for a moment while the job still runs, and says so.
 */
export async function printLogs(
  ctx: CliContext,
  client: ComputeJobsClient,
  jobId: string,
  follow: boolean,
): Promise<number> {
  const stop = new AbortController();
  let idle: NodeJS.Timeout | undefined;
  const armIdle = () => {
    if (follow) return;
    clearTimeout(idle);
    idle = setTimeout(() => stop.abort(new Error("caught up")), CAUGHT_UP_MS);
  };
  armIdle();
  try {
    const onReconnect = ({ url, attempt, maxReconnects, delayMs, error }: LogReconnect) =>
      ctx.note(
        ctx.colors.dim(
          `${error === undefined ? "the log stream closed before the job's end" : `the log stream was lost (${error instanceof Error ? error.message : String(error)})`}; reconnecting to ${url} in ${seconds(delayMs)} (${attempt} of ${maxReconnects})`,
        ),
      );
    for await (const item of client.jobs.logs(jobId, { signal: stop.signal, onReconnect })) {
      armIdle();
      if (item.type === "log") {
        if (ctx.json) ctx.io.stdout.write(`${JSON.stringify({ id: item.id, ...item.line })}\n`);
        else (item.line.stream === "stderr" ? ctx.io.stderr : ctx.io.stdout).write(`${item.line.line}\n`);
        continue;
      }
      if (ctx.json) ctx.io.stdout.write(`${JSON.stringify({ end: item.end })}\n`);
      else
        ctx.note(
          `${ctx.colors.dim("job")} ${jobId} ${stateText(ctx.colors, item.end.state)}${item.end.exit_code !== null ? ` (exit code ${item.end.exit_code})` : ""}${item.end.error ? `: ${item.end.error.message}` : ""}`,
        );
      return exitCodeOfJob(item.end);
    }
    return 0;
  } catch (error) {
    if (!stop.signal.aborted) throw error;
    ctx.note(ctx.colors.dim(`(job ${jobId} is still running; \`cjs logs -f ${jobId}\` follows it)`));
    return 0;
  } finally {
    clearTimeout(idle);
  }
}

/** Waits for a job's end with a progress line on a terminal; answers the job. */
export async function waitWithProgress(ctx: CliContext, client: ComputeJobsClient, jobId: string) {
  const progress = new ProgressLine(ctx.io.stderr);
  const started = Date.now();
  const timer = setInterval(async () => {
    const job = await client.jobs.retrieve(jobId).catch(() => null);
    if (job)
      progress.update(
        `${jobId} ${job.job.state}${job.job.pending_reason ? ` (${job.job.pending_reason})` : ""} · ${Math.round((Date.now() - started) / 1000)} s`,
      );
  }, 1000);
  try {
    return await client.jobs.wait(jobId);
  } finally {
    clearInterval(timer);
    progress.done();
  }
}
