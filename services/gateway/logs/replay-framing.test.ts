import { afterEach, describe, expect, it } from "vitest";
import type { Worker } from "node:worker_threads";
import { encodeJson } from "../../../shared/nats/index.js";
import type { StoredLogLines } from "../../../shared/records/index.js";
import { logEvents } from "./log-events.js";
import { ReplayFraming } from "./replay-framing.js";
import { sseFrame } from "./sse-frame.js";
import { RUN_CHARS, runEnd } from "./sse-writer.js";

const decoder = new TextDecoder();

function storedMessage(lines: number, width = 40): StoredLogLines & { budget: number } {
  return {
    budget: 100_000,
    lines: Array.from({ length: lines }, (_, index) => ({
      seq: index + 1,
      stream: index % 3 === 0 ? ("stderr" as const) : ("stdout" as const),
      line: `line ${index + 1} ${"é".repeat(width)}`,
      ts: "2026-11-28T08:00:00.000Z",
    })),
  };
}

const opened: ReplayFraming[] = [];
function framing(): ReplayFraming {
  const made = new ReplayFraming();
  opened.push(made);
  return made;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((made) => made.close()));
});

describe("replay framing on its thread", () => {
  it("frames a stored message's lines from the one asked for as the gateway's own log events would be", async () => {
    const message = storedMessage(50);
    const framed = await framing().frame(encodeJson(message), 812, 3, 7);
    const expected = logEvents(message, 3, 812, 7).map(sseFrame).join("");
    expect(framed).not.toBeNull();
    expect(decoder.decode(framed!)).toBe(expected);
    expect(expected.match(/^event: log$/gm)).toHaveLength(43);
  });

  it("answers null for a message that is not a log message, and goes on framing the next", async () => {
    const made = framing();
    expect(await made.frame(encodeJson({ hello: "world" }), 5, 1, 0)).toBeNull();
    expect(await made.frame(new TextEncoder().encode("{not json"), 6, 1, 0)).toBeNull();
    expect(decoder.decode((await made.frame(encodeJson(storedMessage(1)), 7, 1, 0))!)).toContain("event: log");
  });

  it("fails the replays waiting on a thread that stops, and the next replay gets a new thread", async () => {
    const made = framing();
    await made.frame(encodeJson(storedMessage(1)), 1, 1, 0);
    const waiting = made.frame(encodeJson(storedMessage(1000)), 2, 1, 0);
    // The pool's thread as the class keeps it: stopping it from outside is what a crash looks like to the gateway.
    const [thread] = (Reflect.get(made, "pool") as { threads: Worker[] }).threads;
    await thread!.terminate();
    await expect(waiting).rejects.toThrow();
    expect(decoder.decode((await made.frame(encodeJson(storedMessage(2)), 3, 1, 0))!)).toContain("id: ");
  });

  it("refuses to frame once closed", async () => {
    const made = framing();
    await made.close();
    await expect(made.frame(encodeJson(storedMessage(1)), 1, 1, 0)).rejects.toThrow(/closed/);
  });
});

describe("runs of framed bytes", () => {
  it("end where a frame ends, cover every byte once, and hold a frame longer than a run whole", () => {
    const frames = [
      ...storedMessage(600, 200).lines.map((line, index) => sseFrame({ name: "log", data: line, id: index })),
      sseFrame({ name: "log", data: "x".repeat(RUN_CHARS * 2), id: 600 }),
      sseFrame({ name: "log", data: "tail", id: 601 }),
    ];
    const bytes = new TextEncoder().encode(frames.join(""));
    const runs: string[] = [];
    for (let start = 0; start < bytes.length; ) {
      const end = runEnd(bytes, start);
      expect(end).toBeGreaterThan(start);
      runs.push(decoder.decode(bytes.subarray(start, end)));
      start = end;
    }
    expect(runs.length).toBeGreaterThan(3);
    expect(runs.join("")).toBe(frames.join(""));
    for (const run of runs) expect(run.endsWith("\n\n")).toBe(true);
    expect(runs.some((run) => run.length > RUN_CHARS * 2)).toBe(true);
  });
});
