import { describe, expect, it } from "vitest";
import { logEventId, logPosition } from "./log-event-id.js";

describe("log event ids", () => {
  it("grow with every line, within a message and from one message to the next", () => {
    const ids = [
      { streamSeq: 1, index: 0 },
      { streamSeq: 1, index: 1 },
      { streamSeq: 1, index: 999 },
      { streamSeq: 2, index: 0 },
      { streamSeq: 40, index: 17 },
    ].map(logEventId);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("name back the line they were made from", () => {
    for (const position of [
      { streamSeq: 1, index: 0 },
      { streamSeq: 7, index: 999 },
      { streamSeq: 999_999_999_999, index: 42 },
    ]) {
      expect(logPosition(logEventId(position))).toEqual(position);
    }
  });

  it("0 is before the first line of the stream", () => {
    expect(logPosition(0)).toEqual({ streamSeq: 0, index: 0 });
  });
});
