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
    const cache = new InvalidatedCache<string>(2);
    await cache.get("a", async () => "1");
    await cache.get("b", async () => "2");
    await cache.get("c", async () => "3");
    expect(cache.size).toBe(2);
    expect(await cache.get("a", async () => "reloaded")).toBe("reloaded");
  });
});
