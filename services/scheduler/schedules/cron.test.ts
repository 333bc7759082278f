import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors/index.js";
import { checkCron, lastTickBy, nextTick } from "./cron.js";

const NOW = Date.parse("2026-03-28T12:00:00.500Z");

function issueOf(run: () => unknown): { code: string; path: unknown } {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError)
      return { code: error.code, path: (error.details as { issues: Array<{ path: string }> }).issues[0]!.path };
    throw error;
  }
  throw new Error("no error thrown");
}

describe("checkCron", () => {
  it("accepts 5 fields and answers the first tick after now", () => {
    expect(new Date(checkCron("*/15 * * * *", "UTC", 10, NOW)).toISOString()).toBe("2026-03-28T12:15:00.000Z");
  });

  it("accepts 6 fields with seconds first", () => {
    expect(new Date(checkCron("*/10 * * * * *", "UTC", 10, NOW)).toISOString()).toBe("2026-03-28T12:00:10.000Z");
  });

  it("reads the expression in the schedule's time zone, across a daylight-saving change", () => {
    const first = checkCron("0 9 * * *", "Europe/Berlin", 10, NOW);
    expect(new Date(first).toISOString()).toBe("2026-03-29T07:00:00.000Z");
    expect(new Date(nextTick("0 9 * * *", "Europe/Berlin", Date.parse("2026-03-28T00:00:00Z"))!).toISOString()).toBe(
      "2026-03-28T08:00:00.000Z",
    );
  });

  it("refuses a malformed expression, naming the cron field", () => {
    expect(issueOf(() => checkCron("every minute", "UTC", 10, NOW))).toEqual({ code: "request.invalid", path: "cron" });
    expect(issueOf(() => checkCron("61 * * * *", "UTC", 10, NOW))).toEqual({ code: "request.invalid", path: "cron" });
    expect(issueOf(() => checkCron("* * * * * * *", "UTC", 10, NOW))).toEqual({
      code: "request.invalid",
      path: "cron",
    });
  });

  it("refuses an expression that never fires", () => {
    expect(issueOf(() => checkCron("0 0 31 2 *", "UTC", 10, NOW))).toEqual({ code: "request.invalid", path: "cron" });
  });

  it("refuses an unknown time zone, naming the timezone field", () => {
    expect(issueOf(() => checkCron("0 * * * *", "Mars/Olympus", 10, NOW))).toEqual({
      code: "request.invalid",
      path: "timezone",
    });
  });

  it("refuses ticks closer than the minimum interval, bursts included", () => {
    expect(issueOf(() => checkCron("*/5 * * * * *", "UTC", 10, NOW))).toEqual({
      code: "request.invalid",
      path: "cron",
    });
    expect(issueOf(() => checkCron("0,1 * * * * *", "UTC", 10, NOW))).toEqual({
      code: "request.invalid",
      path: "cron",
    });
    expect(checkCron("* * * * * *", "UTC", 1, NOW)).toBe(Date.parse("2026-03-28T12:00:01.000Z"));
  });
});

describe("lastTickBy", () => {
  it("answers the latest tick at or before the time", () => {
    expect(new Date(lastTickBy("*/10 * * * * *", "UTC", NOW)!).toISOString()).toBe("2026-03-28T12:00:00.000Z");
    expect(new Date(lastTickBy("*/10 * * * * *", "UTC", Date.parse("2026-03-28T12:00:10.000Z"))!).toISOString()).toBe(
      "2026-03-28T12:00:10.000Z",
    );
  });
});
