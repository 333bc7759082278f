import { Cron } from "croner";
import { AppError } from "../../../shared/errors/index.js";

/** Ticks looked at for the shortest gap: enough to see a burst (`0,1,2 * * * *`) wherever the next ones fall. */
const GAP_SAMPLE = 8;

function invalid(path: "cron" | "timezone", message: string): AppError {
  return new AppError("request.invalid", `${path}: ${message}`, { details: { issues: [{ path, message }] } });
}

function isTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

function cronOf(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, paused: true });
}

/**
 * Checks a schedule's expression and time zone as a create receives them: 5 fields, or 6
 * with seconds first; an IANA zone; at least one tick to come; no two of its next ticks
 * closer than `minIntervalSeconds`. Throws `request.invalid` naming the field; returns the
 * first tick after `nowMs`.
 */
export function checkCron(expression: string, timezone: string, minIntervalSeconds: number, nowMs: number): number {
  if (!isTimeZone(timezone)) throw invalid("timezone", `not an IANA time zone such as "Europe/Berlin"`);
  const fields = expression.split(/\s+/).length;
  if (fields !== 5 && fields !== 6)
    throw invalid("cron", "5 fields (minute hour day month weekday), or 6 with seconds first");
  let ticks: Date[];
  try {
    ticks = cronOf(expression, timezone).nextRuns(GAP_SAMPLE, new Date(nowMs));
  } catch (error) {
    throw invalid("cron", (error as Error).message.replace(/^CronPattern: /, ""));
  }
  if (ticks.length === 0) throw invalid("cron", "it never fires");
  for (let index = 1; index < ticks.length; index += 1) {
    if (ticks[index]!.getTime() - ticks[index - 1]!.getTime() < minIntervalSeconds * 1000) {
      throw invalid("cron", `ticks at least ${minIntervalSeconds} s apart`);
    }
  }
  return ticks[0]!.getTime();
}

/** The first tick after `afterMs`; null when there is none. */
export function nextTick(expression: string, timezone: string, afterMs: number): number | null {
  return cronOf(expression, timezone).nextRun(new Date(afterMs))?.getTime() ?? null;
}

/** The last tick at or before `atMs`; null when there is none. */
export function lastTickBy(expression: string, timezone: string, atMs: number): number | null {
  return (
    cronOf(expression, timezone)
      .previousRuns(1, new Date(atMs + 1))[0]
      ?.getTime() ?? null
  );
}
