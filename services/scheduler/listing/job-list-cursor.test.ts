import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors/index.js";
import { decodeListCursor, encodeListCursor } from "./job-list-cursor.js";

const APP = "app1";
const BUSINESS = "biz_BBBBBBBBBBBBBBBBBBBB";
const JOB = "job_00000002AAAAAAAAAAAA";

function refusal(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof AppError ? error.code : "other";
  }
  return undefined;
}

describe("the jobs/list cursor", () => {
  it("names the same position back for the same listing, whatever the order of repeated filters or spelling of a time", () => {
    const cursor = encodeListCursor(
      APP,
      BUSINESS,
      { metadata: ["a=1", "b=2"], created_after: "2026-01-01T00:00:00Z" },
      JOB,
    );
    expect(
      decodeListCursor(APP, BUSINESS, { metadata: ["b=2", "a=1"], created_after: "2026-01-01T00:00:00.000Z" }, cursor),
    ).toBe(JOB);
  });

  it("is refused as request.invalid for another business, other filters, or text that is no cursor", () => {
    const cursor = encodeListCursor(APP, BUSINESS, { state: "queued" }, JOB);
    expect(refusal(() => decodeListCursor(APP, "biz_CCCCCCCCCCCCCCCCCCCC", { state: "queued" }, cursor))).toBe(
      "request.invalid",
    );
    expect(refusal(() => decodeListCursor(APP, BUSINESS, { state: "running" }, cursor))).toBe("request.invalid");
    expect(refusal(() => decodeListCursor(APP, BUSINESS, { state: "queued" }, JOB))).toBe("request.invalid");
    expect(refusal(() => decodeListCursor(APP, BUSINESS, {}, "!!!"))).toBe("request.invalid");
  });
});
