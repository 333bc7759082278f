import { describe, expect, it } from "vitest";
import { ChunkFeed } from "./chunk-feed.js";

const bytes = (...values: number[]) => new Uint8Array(values);

describe("ChunkFeed", () => {
  it("a push resolves only once the reader has taken the chunk and asks for the next", async () => {
    const feed = new ChunkFeed();
    const reader = feed.stream.getReader();
    let pushed = false;
    const push = feed.push(bytes(1, 2)).then(() => (pushed = true));
    expect(await reader.read()).toEqual({ done: false, value: bytes(1, 2) });
    // Taken, but the reader has not asked again: the writer still waits.
    await Promise.resolve();
    expect(pushed).toBe(false);
    const next = reader.read();
    await push;
    expect(pushed).toBe(true);
    feed.close();
    expect(await next).toEqual({ done: true, value: undefined });
  });

  it("holds one chunk at a time: a second push waits until the first is read", async () => {
    const feed = new ChunkFeed();
    const reader = feed.stream.getReader();
    const first = feed.push(bytes(1));
    const read = await reader.read();
    expect(read.value).toEqual(bytes(1));
    const readNext = reader.read();
    await first;
    const second = feed.push(bytes(2));
    expect((await readNext).value).toEqual(bytes(2));
    const last = reader.read();
    await second;
    feed.close();
    expect((await last).done).toBe(true);
  });

  it("a failure rejects the waiting push and errors the reader", async () => {
    const feed = new ChunkFeed();
    const reader = feed.stream.getReader();
    const push = feed.push(bytes(1));
    await reader.read();
    const failure = new Error("store down");
    feed.fail(failure);
    await expect(push).rejects.toBe(failure);
    await expect(reader.read()).rejects.toBe(failure);
    await expect(feed.push(bytes(2))).rejects.toBe(failure);
  });
});
