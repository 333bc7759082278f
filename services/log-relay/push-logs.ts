import type { z } from "zod";
import { LogLine, type PushLogsCommand, type PushLogsResponse } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { decodeJson, encodeJson, STREAMS, subjects } from "../../shared/nats/index.js";
import type { LogRelayConfig } from "./config.js";
import { recordDropped } from "./dropped-lines.js";
import type { LogStore } from "./log-store.js";

/** Whether the node holds this attempt now, or held it last (late lines of a finished attempt). */
async function holdsAttempt(store: LogStore, nodeId: string, jobId: string, attempt: number): Promise<boolean> {
  const reserved = (await store.allocations.get(nodeId))?.value.attempts[jobId];
  if (reserved) return reserved.attempt === attempt;
  for (const key of await store.jobs.keys(`*.*.${jobId}`)) {
    const job = (await store.jobs.get(key))?.value;
    return job?.node_id === nodeId && job.attempt === attempt;
  }
  return false;
}

/** The highest `seq` stored for an attempt, 0 when none. */
async function lastStoredSeq(store: LogStore, subject: string): Promise<number> {
  const last = await store.jsm.streams.getMessage(STREAMS.logs, { last_by_subj: subject });
  return last ? LogLine.parse(decodeJson(last.data)).seq : 0;
}

/**
 * How many lines this attempt may store: the job's cap less the `seq` numbers its earlier
 * attempts used. Earlier attempts are fenced off (only the latest attempt takes lines), so
 * the budget of an attempt never changes and a resent batch is cut at the same line.
 */
async function attemptBudget(store: LogStore, cap: number, jobId: string, attempt: number): Promise<number> {
  const earlier = Array.from({ length: attempt - 1 }, (_, index) => lastStoredSeq(store, subjects.jobLogs(jobId, index + 1)));
  const used = (await Promise.all(earlier)).reduce((sum, seq) => sum + seq, 0);
  return Math.max(0, cap - used);
}

/** The one line stored in place of everything past the cap, under the first `seq` past it. */
function truncationMarker(cap: number, seq: number, ts: string): LogLine {
  return { seq, stream: "stderr", line: `[log truncated: this job reached its limit of ${cap} lines; later lines are not stored]`, ts };
}

/**
 * Stores a batch of an attempt's log lines, one message each. Lines at or below the
 * highest stored `seq` are skipped, and each publish carries a message id, so a resent
 * batch is stored once whatever its timing. Lines past the job's cap are dropped: the
 * first push that reaches it stores one marker line, and the drop count is recorded for
 * the log stream's `end` event. Lines of an attempt the node no longer holds are refused.
 */
export function pushLogs(store: LogStore, config: Pick<LogRelayConfig, "CJS_LOG_MAX_LINES_PER_JOB">) {
  const cap = config.CJS_LOG_MAX_LINES_PER_JOB;
  return async ({ caller, body }: z.infer<typeof PushLogsCommand>): Promise<PushLogsResponse> => {
    if (!(await holdsAttempt(store, caller.node_id, body.job_id, body.attempt))) {
      throw new AppError("job.stale_attempt", `Attempt ${body.attempt} of ${body.job_id} is not this node's.`, { details: { job_id: body.job_id, attempt: body.attempt } });
    }
    const subject = subjects.jobLogs(body.job_id, body.attempt);
    const [budget, stored] = await Promise.all([attemptBudget(store, cap, body.job_id, body.attempt), lastStoredSeq(store, subject)]);
    const ordered = [...body.lines].sort((a, b) => a.seq - b.seq).filter((line, index, lines) => line.seq !== lines[index - 1]?.seq);
    const publish = (line: LogLine) => store.js.publish(subject, encodeJson(line), { msgID: `${body.job_id}:${body.attempt}:${line.seq}` });

    let accepted = 0;
    for (const line of ordered.filter((candidate) => candidate.seq > stored && candidate.seq <= budget)) {
      const ack = await publish(line);
      if (!ack.duplicate) accepted += 1;
    }
    const over = body.lines.filter((line) => line.seq > budget);
    const firstOver = ordered.find((line) => line.seq > budget);
    const lastOver = ordered.at(-1);
    if (firstOver && lastOver) {
      // The marker takes the first seq past the budget, so its message id makes it one per attempt.
      if (stored <= budget) await publish(truncationMarker(cap, budget + 1, firstOver.ts));
      await recordDropped(store, body.job_id, body.attempt, lastOver.seq - budget);
    }
    return { accepted, duplicates: body.lines.length - accepted - over.length, dropped: over.length };
  };
}
