import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import type { z } from "zod";
import type { LogLine, PushLogsCommand, PushLogsResponse } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { subjects } from "../../shared/nats/index.js";
import {
  jobIdKeyFilter,
  LOG_MESSAGE_MAX_LINES,
  lineBytes,
  type LogMessage,
  parseJobKey,
} from "../../shared/records/index.js";
import { type AttemptLog, AttemptLogCache, type JobLogCaps, readAttemptLog } from "./attempt-log.js";
import type { LogRelayConfig } from "./config.js";
import { recordDropped } from "./dropped-lines.js";
import type { LogQuotas } from "./log-quotas.js";
import type { LogStore } from "./log-store.js";

/** Bytes of lines in one message at most (a single longer line is a message of its own): well below NATS's 1 MiB payload. */
const MESSAGE_MAX_BYTES = 256 * 1024;
/** Attempts whose stored position this replica remembers. */
const ATTEMPTS_REMEMBERED = 10_000;
/** Writes of one push refused because another push of the attempt wrote first, before it gives up. */
const CAS_TRIES = 5;

/** The job (its record's key) when the node holds this attempt now, or held it last (late lines of a finished attempt); else null. */
async function heldAttempt(store: LogStore, nodeId: string, jobId: string, attempt: number): Promise<string | null> {
  const reserved = (await store.allocations.get(nodeId))?.value.attempts[jobId];
  if (reserved) return reserved.attempt === attempt ? reserved.job_key : null;
  for (const key of await store.jobs.keys(jobIdKeyFilter(jobId))) {
    const job = (await store.jobs.get(key))?.value;
    return job?.node_id === nodeId && job.attempt === attempt ? key : null;
  }
  return null;
}

/** The one line stored in place of everything past a cap, under the first `seq` past it. */
function truncationMarker(limit: string, seq: number, ts: string): LogLine {
  return {
    seq,
    stream: "stderr",
    line: `[log truncated: this job reached its limit of ${limit}; later lines are not stored]`,
    ts,
  };
}

/** One message to store: its payload, the last `seq`, the number of lines within the budget and the bytes it holds. */
interface Message {
  payload: Uint8Array;
  lastSeq: number;
  lines: number;
  bytes: number;
}

const encoder = new TextEncoder();

/** What every message of one push carries besides its lines: the attempt's budgets and the bytes stored before it. */
interface Budgets {
  budget: number;
  byteBudget: number;
  bytesBefore: number;
}

/** The lines as `LogMessage`s of at most `LOG_MESSAGE_MAX_LINES` lines and (unless one line is longer) `MESSAGE_MAX_BYTES`, in order. */
function messagesOf(budgets: Budgets, lines: LogLine[]): Message[] {
  const last = lines.at(-1);
  if (!last) return [];
  if (lines.length <= LOG_MESSAGE_MAX_LINES) {
    const bytes = lines.reduce((sum, line) => sum + lineBytes(line), 0);
    const message: LogMessage = {
      budget: budgets.budget,
      byte_budget: budgets.byteBudget,
      bytes: budgets.bytesBefore + bytes,
      lines,
    };
    const payload = encoder.encode(JSON.stringify(message));
    if (payload.length <= MESSAGE_MAX_BYTES || lines.length === 1) {
      return [{ payload, lastSeq: last.seq, lines: lines.filter((line) => line.seq <= budgets.budget).length, bytes }];
    }
  }
  // Rare (a batch of long lines): halve until each part fits.
  const middle = Math.ceil(lines.length / 2);
  const head = messagesOf(budgets, lines.slice(0, middle));
  const headBytes = head.reduce((sum, message) => sum + message.bytes, 0);
  return [...head, ...messagesOf({ ...budgets, bytesBefore: budgets.bytesBefore + headBytes }, lines.slice(middle))];
}

/**
 * Of the lines above the last stored `seq`, those the attempt may still store, and the line
 * budget after them: a line that would take the attempt past its byte budget lowers the
 * budget to the line before it, so it and every later line are past the cap (dropped and
 * counted like lines past the line cap), now and in every later push.
 */
function withinBudgets(
  log: AttemptLog,
  lines: readonly LogLine[],
): { lines: LogLine[]; budget: number; byBytes: boolean } {
  const kept: LogLine[] = [];
  let bytes = log.bytes;
  for (const line of lines) {
    if (line.seq <= log.lastSeq) continue;
    if (line.seq > log.budget) break;
    const size = lineBytes(line);
    if (bytes + size > log.byteBudget) return { lines: kept, budget: line.seq - 1, byBytes: true };
    bytes += size;
    kept.push(line);
  }
  return { lines: kept, budget: log.budget, byBytes: false };
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
 * first copy through another replica, stores each line once. Lines past the job's caps
 * (lines, or bytes of text) are dropped: the first push that reaches one stores one marker
 * line, and the drop count is recorded for the log stream's `end` event. Lines of an
 * attempt the node no longer holds are refused, and so is a push of a node or business
 * whose log quota is used up (`LogQuotas`).
 */
export function pushLogs(
  store: LogStore,
  config: Pick<LogRelayConfig, "CJS_LOG_MAX_LINES_PER_JOB" | "CJS_LOG_MAX_BYTES_PER_JOB">,
  quotas: LogQuotas,
) {
  const caps: JobLogCaps = { lines: config.CJS_LOG_MAX_LINES_PER_JOB, bytes: config.CJS_LOG_MAX_BYTES_PER_JOB };
  const known = new AttemptLogCache(ATTEMPTS_REMEMBERED);
  return async ({ caller, body }: z.infer<typeof PushLogsCommand>): Promise<PushLogsResponse> => {
    // A node over its quota is refused before anything is read: refusing it again and again costs nothing.
    await quotas.checkNode(caller.node_id);
    const jobKey = await heldAttempt(store, caller.node_id, body.job_id, body.attempt);
    if (jobKey === null) {
      throw new AppError("job.stale_attempt", `Attempt ${body.attempt} of ${body.job_id} is not this node's.`, {
        details: { job_id: body.job_id, attempt: body.attempt },
      });
    }
    const parts = parseJobKey(jobKey);
    if (parts === null) throw new AppError("internal.error", "A job record is stored under a key of no known form.");
    const account = { app_id: parts.app_id, business_id: parts.business_id };
    await quotas.checkBusiness(account);
    const subject = subjects.jobLogs(body.job_id, body.attempt);
    const ordered = [...body.lines]
      .sort((a, b) => a.seq - b.seq)
      .filter((line, index, lines) => line.seq !== lines[index - 1]?.seq);

    let accepted = 0;
    let storedBytes = 0;
    let log: AttemptLog;
    for (let tryNumber = 1; ; tryNumber += 1) {
      const remembered = known.get(subject);
      log = remembered ?? (await readAttemptLog(store, caps, body.job_id, body.attempt));
      if (!remembered) known.set(subject, log);
      const within = withinBudgets(log, ordered);
      const budget = within.budget;
      const toStore = within.lines;
      const firstOver = ordered.find((line) => line.seq > budget);
      // The marker takes the first seq past the budget; once it is stored, no push adds another.
      if (firstOver && log.lastSeq <= budget) {
        const limit = within.byBytes ? `${caps.bytes} bytes` : `${caps.lines} lines`;
        toStore.push(truncationMarker(limit, budget + 1, firstOver.ts));
      }
      try {
        let bytesBefore = log.bytes;
        for (const message of messagesOf({ budget, byteBudget: log.byteBudget, bytesBefore }, toStore)) {
          const ack = await store.js.publish(subject, message.payload, {
            expect: { lastSubjectSequence: log.streamSeq },
          });
          bytesBefore += message.bytes;
          log = { ...log, budget, bytes: bytesBefore, lastSeq: message.lastSeq, streamSeq: ack.seq };
          known.set(subject, log);
          accepted += message.lines;
          storedBytes += message.bytes;
        }
        log = { ...log, budget };
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
    quotas.record(caller.node_id, account, storedBytes);
    const over = body.lines.filter((line) => line.seq > log.budget);
    const lastOver = ordered.at(-1);
    if (over.length > 0 && lastOver) await recordDropped(store, body.job_id, body.attempt, lastOver.seq - log.budget);
    return { accepted, duplicates: body.lines.length - accepted - over.length, dropped: over.length };
  };
}
