import { describe, expect, it } from "vitest";
import { InvalidatedCache } from "./invalidated-cache.js";

describe("InvalidatedCache", () => {
  it("loads once and serves the cached value until evicted", async () => {
    const cache = new InvalidatedCache<string>();
    let loads = 0;
    const load = async () => `v${++loads}`;
    expect(await cache.get("a", load)).toBe("v1");
    expect(await cache.get("a", load)).toBe("v1");
    cache.evict("a");
    expect(await cache.get("a", load)).toBe("v2");
  });

  it("does not cache a value whose load raced with an eviction of that key", async () => {
    const cache = new InvalidatedCache<string>();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const pending = cache.get("a", async () => {
      await gate;
      return "stale";
    });
    cache.evict("a");
    release();
    expect(await pending).toBe("stale");
    expect(await cache.get("a", async () => "fresh")).toBe("fresh");
  });

  it("does not cache a value whose load raced with a clear", async () => {
    const cache = new InvalidatedCache<string>();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const pending = cache.get("a", async () => {
      await gate;
      return "stale";
    });
    cache.clear();
    release();
    await pending;
    expect(await cache.get("a", async () => "fresh")).toBe("fresh");
  });

  it("never caches a missing record", async () => {
    const cache = new InvalidatedCache<string>();
    expect(await cache.get("a", async () => null)).toBeNull();
    expect(await cache.get("a", async () => "now there")).toBe("now there");
  });

  it("stays within its bound by dropping the oldest entry", async () => {
    const cache = new InvalidatedCache<string>({ maxEntries: 2 });
    await cache.get("a", async () => "1");
    await cache.get("b", async () => "2");
    await cache.get("c", async () => "3");
    expect(cache.size).toBe(2);
    expect(await cache.get("a", async () => "reloaded")).toBe("reloaded");
  });

  it("loads an entry again once it is maxAgeMs old, though nothing evicted it (a change whose eviction never came)", async () => {
    let nowMs = 1_000;
    const cache = new InvalidatedCache<string>({ maxAgeMs: 15_000, now: () => nowMs });
    let stored = "active";
    const load = async () => stored;
    expect(await cache.get("key", load)).toBe("active");
    stored = "revoked";
    nowMs += 14_999;
    expect(await cache.get("key", load)).toBe("active");
    nowMs += 1;
    expect(await cache.get("key", load)).toBe("revoked");
    stored = "changed again";
    nowMs += 14_999;
    expect(await cache.get("key", load)).toBe("revoked");
  });

  it("keeps a refreshed entry over older ones when it must drop one", async () => {
    let nowMs = 0;
    const cache = new InvalidatedCache<string>({ maxEntries: 2, maxAgeMs: 10, now: () => nowMs });
    await cache.get("a", async () => "a1");
    await cache.get("b", async () => "b1");
    nowMs = 10;
    await cache.get("a", async () => "a2");
    await cache.get("c", async () => "c1");
    expect(await cache.get("a", async () => "a3")).toBe("a2");
  });
});
