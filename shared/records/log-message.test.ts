import { describe, expect, it } from "vitest";
import { readLogMessage } from "./log-message.js";

const line = (seq: number) => ({ seq, stream: "stdout", line: `line ${seq}`, ts: "2026-11-22T01:08:55.120Z" });

describe("readLogMessage", () => {
  it("reads a message's lines and budget", () => {
    expect(readLogMessage({ budget: 50, lines: [line(1), line(2)] })).toEqual({
      budget: 50,
      lines: [line(1), line(2)],
    });
  });

  it("reads one bare line, as earlier versions stored them, with no budget", () => {
    expect(readLogMessage(line(7))).toEqual({ budget: undefined, lines: [line(7)] });
  });

  it("refuses anything else", () => {
    for (const value of [
      undefined,
      null,
      "text",
      {},
      { budget: 5, lines: [] },
      { budget: -1, lines: [line(1)] },
      { lines: [line(1)] },
      { ...line(1), seq: 0 },
    ]) {
      expect(readLogMessage(value)).toBeUndefined();
    }
  });
});
