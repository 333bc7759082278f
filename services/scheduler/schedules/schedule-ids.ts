import { createHash } from "node:crypto";
import { fromBase62, randomBase62, toBase62 } from "../../../shared/runtime/index.js";

/** 62^6: six base62 characters, well within a safe integer. */
const SIX_BASE62 = 62 ** 6;

/** A schedule id that sorts by creation time, like a job id: 8 base62 characters of milliseconds, then 12 random. */
export function newScheduleId(nowMs: number): string {
  return `sch_${toBase62(nowMs, 8)}${randomBase62(12)}`;
}

/**
 * The id of the job a schedule makes for one tick: the tick's time (so the ids sort like
 * any job's), then 12 base62 characters of a SHA-256 of the schedule and the tick. Every
 * replica, and a restart, names the same job for the same tick, so making it twice finds
 * the first (`resource.already_exists`) and makes nothing.
 */
export function tickJobId(scheduleId: string, tickMs: number): string {
  const digest = createHash("sha256").update(`${scheduleId}:${tickMs}`).digest();
  const part = (offset: number) => toBase62(digest.readUIntBE(offset, 6) % SIX_BASE62, 6);
  return `job_${toBase62(tickMs, 8)}${part(0)}${part(6)}`;
}

/** The time (ms) a job id begins with: for a tick's job, its tick. */
export function timeOfJobId(jobId: string): number {
  return fromBase62(jobId.slice("job_".length, "job_".length + 8));
}
