import type { z } from "zod";
import { LogLine, type PushLogsCommand, type PushLogsResponse } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { decodeJson, encodeJson, STREAMS, subjects } from "../../shared/nats/index.js";
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
  const last = await store.jsm.streams.getMessage(STREAMS.logs, { last_by_subj: subject }).catch(() => null);
  return last ? LogLine.parse(decodeJson(last.data)).seq : 0;
}

/**
 * Stores a batch of an attempt's log lines, one message each. Lines at or below the
 * highest stored `seq` are skipped, and each publish carries a message id, so a resent
 * batch is stored once whatever its timing. Lines of an attempt the node no longer holds
 * are refused.
 */
export function pushLogs(store: LogStore) {
  return async ({ caller, body }: z.infer<typeof PushLogsCommand>): Promise<PushLogsResponse> => {
    if (!(await holdsAttempt(store, caller.node_id, body.job_id, body.attempt))) {
      throw new AppError("job.stale_attempt", `Attempt ${body.attempt} of ${body.job_id} is not this node's.`, { details: { job_id: body.job_id, attempt: body.attempt } });
    }
    const subject = subjects.jobLogs(body.job_id, body.attempt);
    const stored = await lastStoredSeq(store, subject);
    const fresh = [...body.lines].sort((a, b) => a.seq - b.seq).filter((line, index, lines) => line.seq > stored && line.seq !== lines[index - 1]?.seq);
    let accepted = 0;
    for (const line of fresh) {
      const ack = await store.js.publish(subject, encodeJson(line), { msgID: `${body.job_id}:${body.attempt}:${line.seq}` });
      if (!ack.duplicate) accepted += 1;
    }
    return { accepted, duplicates: body.lines.length - accepted };
  };
}
