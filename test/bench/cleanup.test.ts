import { describe, expect, it } from "vitest";
import { Cleanup } from "./cleanup.js";

describe("bench cleanup", () => {
  it("stopAll stops what is still registered, newest first, and each thing once", async () => {
    const cleanup = new Cleanup();
    const stopped: string[] = [];
    cleanup.add("nats", async () => void stopped.push("nats"));
    const stopServices = cleanup.add("services", async () => void stopped.push("services"));
    cleanup.add("nodes", async () => void stopped.push("nodes"));
    await stopServices();
    expect(await cleanup.stopAll(1_000)).toEqual([]);
    await stopServices();
    expect(stopped).toEqual(["services", "nodes", "nats"]);
  });

  it("a stop under way when stopAll starts is awaited, not run again", async () => {
    const cleanup = new Cleanup();
    let runs = 0;
    let release = (): void => {};
    const stop = cleanup.add("services", () => {
      runs += 1;
      return new Promise<void>((resolve) => (release = resolve));
    });
    const first = stop();
    const all = cleanup.stopAll(1_000);
    release();
    await Promise.all([first, all]);
    expect(runs).toBe(1);
  });

  it("a stop that hangs is reported after the step timeout and the rest still stop", async () => {
    const cleanup = new Cleanup();
    let natsStopped = false;
    cleanup.add("nats", async () => void (natsStopped = true));
    cleanup.add("services", () => new Promise<void>(() => {}));
    expect(await cleanup.stopAll(20)).toEqual(["services: did not stop within 20 ms"]);
    expect(natsStopped).toBe(true);
  });
});
