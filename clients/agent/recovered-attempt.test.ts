import { describe, expect, it } from "vitest";
import type { LogLine } from "../../shared/contract/index.js";
import { unsentLines } from "./recovered-attempt.js";

const line = (seq: number): LogLine => ({ seq, stream: "stdout", line: `l${seq}`, ts: "2026-01-01T00:00:00.000Z" });

describe("unsentLines", () => {
  it("keeps the spooled lines above the acknowledged seq, in order, once each", () => {
    expect(unsentLines([line(1), line(2), line(4), line(3), line(4), line(5)], 2).map((kept) => kept.seq)).toEqual([
      3, 4, 5,
    ]);
    expect(unsentLines([line(1)], 1)).toEqual([]);
  });
});
