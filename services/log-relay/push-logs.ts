import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import type { z } from "zod";
import type { LogLine, PushLogsCommand, PushLogsResponse } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { subjects } from "../../shared/nats/index.js";
import { jobIdKeyFilter, LOG_MESSAGE_MAX_LINES, type LogMessage } from "../../shared/records/index.js";
import { type AttemptLog, AttemptLogCache, readAttemptLog } from "./attempt-log.js";
import type { LogRelayConfig } from "./config.js";
import { recordDropped } from "./dropped-lines.js";
import type { LogStore } from "./log-store.js";

/** Bytes of lines in one message at most (a single longer line is a message of its own): well below NATS's 1 MiB payload. */
const MESSAGE_MAX_BYTES = 256 * 1024;
/** Attempts whose stored position this replica remembers. */
const ATTEMPTS_REMEMBERED = 10_000;
/** Writes of one push refused because another push of the attempt wrote first, before it gives up. */
const CAS_TRIES = 5;

/** Whether the node holds this attempt now, or held it last (late lines of a finished attempt). */
async function holdsAttempt(store: LogStore, nodeId: string, jobId: string, attempt: number): Promise<boolean> {
  const reserved = (await store.allocations.get(nodeId))?.value.attempts[jobId];
  if (reserved) return reserved.attempt === attempt;
  for (const key of await store.jobs.keys(jobIdKeyFilter(jobId))) {
    const job = (await store.jobs.get(key))?.value;
    return job?.node_id === nodeId && job.attempt === attempt;
  }
  return false;
}

/** The one line stored in place of everything past the cap, under the first `seq` past it. */
function truncationMarker(cap: number, seq: number, ts: string): LogLine {
  return {
    seq,
    stream: "stderr",
    line: `[log truncated: this job reached its limit of ${cap} lines; later lines are not stored]`,
    ts,
  };
}

/** One message to store: its payload, and the last `seq` and the number of lines within the budget it holds. */
interface Message {
  payload: Uint8Array;
  lastSeq: number;
  lines: number;
}

const encoder = new TextEncoder();

/** The lines as `LogMessage`s of at most `LOG_MESSAGE_MAX_LINES` lines and (unless one line is longer) `MESSAGE_MAX_BYTES`, in order. */
function messagesOf(budget: number, lines: LogLine[]): Message[] {
  const last = lines.at(-1);
  if (!last) return [];
  if (lines.length <= LOG_MESSAGE_MAX_LINES) {
    const payload = encoder.encode(JSON.stringify({ budget, lines } satisfies LogMessage));
    if (payload.length <= MESSAGE_MAX_BYTES || lines.length === 1) {
      return [{ payload, lastSeq: last.seq, lines: lines.filter((line) => line.seq <= budget).length }];
    }
  }
  // Rare (a batch of long lines): halve until each part fits.
  const middle = Math.ceil(lines.length / 2);
  return [...messagesOf(budget, lines.slice(0, middle)), ...messagesOf(budget, lines.slice(middle))];
}

function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * Stores a batch of an attempt's log lines: the lines above the highest `seq` stored, in
 * `seq` order, as one message, so all of them or none (a batch past `MESSAGE_MAX_BYTES`
 * as several, in order). Each message is a compare-and-set on the attempt's last message,
 * so a message is only ever stored right after the one it was worked out against: the
 * stored lines are always the node's first ones, and a resent batch, even one racing its
 * first copy through another replica, stores each line once. Lines past the job's cap are
 * dropped: the first push that reaches it stores one marker line, and the drop count is
 * recorded for the log stream's `end` event. Lines of an attempt the node no longer holds
 * are refused.
 */
export function pushLogs(store: LogStore, config: Pick<LogRelayConfig, "CJS_LOG_MAX_LINES_PER_JOB">) {
  const cap = config.CJS_LOG_MAX_LINES_PER_JOB;
  const known = new AttemptLogCache(ATTEMPTS_REMEMBERED);
  return async ({ caller, body }: z.infer<typeof PushLogsCommand>): Promise<PushLogsResponse> => {
    if (!(await holdsAttempt(store, caller.node_id, body.job_id, body.attempt))) {
      throw new AppError("job.stale_attempt", `Attempt ${body.attempt} of ${body.job_id} is not this node's.`, {
        details: { job_id: body.job_id, attempt: body.attempt },
      });
    }
    const subject = subjects.jobLogs(body.job_id, body.attempt);
    const ordered = [...body.lines]
      .sort((a, b) => a.seq - b.seq)
      .filter((line, index, lines) => line.seq !== lines[index - 1]?.seq);

    let accepted = 0;
    let log: AttemptLog;
    for (let tryNumber = 1; ; tryNumber += 1) {
      const remembered = known.get(subject);
      log = remembered ?? (await readAttemptLog(store, cap, body.job_id, body.attempt));
      if (!remembered) known.set(subject, log);
      const { budget, lastSeq } = log;
      const toStore = ordered.filter((line) => line.seq > lastSeq && line.seq <= budget);
      const firstOver = ordered.find((line) => line.seq > budget);
      // The marker takes the first seq past the budget; once it is stored, no push adds another.
      if (firstOver && lastSeq <= budget) toStore.push(truncationMarker(cap, budget + 1, firstOver.ts));
      try {
        for (const message of messagesOf(budget, toStore)) {
          const ack = await store.js.publish(subject, message.payload, {
            expect: { lastSubjectSequence: log.streamSeq },
          });
          log = { budget, lastSeq: message.lastSeq, streamSeq: ack.seq };
          known.set(subject, log);
          accepted += message.lines;
        }
        break;
      } catch (error) {
        // Stored or not, this replica no longer knows where the attempt stands.
        known.delete(subject);
        if (!isWrongLastSequence(error)) throw error;
        if (tryNumber >= CAS_TRIES)
          throw new AppError("service.unavailable", "This job's log is too busy to write right now; try again.", {
            retryAfterSeconds: 1,
          });
      }
    }
    const over = body.lines.filter((line) => line.seq > log.budget);
    const lastOver = ordered.at(-1);
    if (over.length > 0 && lastOver) await recordDropped(store, body.job_id, body.attempt, lastOver.seq - log.budget);
    return { accepted, duplicates: body.lines.length - accepted - over.length, dropped: over.length };
  };
}
