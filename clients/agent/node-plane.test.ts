import { createServer, type Server, type Socket } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { isRetryable } from "./backoff.js";
import { reportResult } from "./finish-attempt.js";
import { httpNodePlane } from "./node-plane.js";
import { pooledFetch } from "./pooled-fetch.js";
import type { StateFile } from "./state-file.js";

/** A server that accepts every connection and never answers; `connected(n)` resolves once n have arrived. */
async function silentServer(): Promise<{
  url: string;
  connected(count: number): Promise<void>;
  close(): Promise<void>;
}> {
  const sockets: Socket[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => undefined);
    for (const waiter of waiters.filter((w) => w.count <= sockets.length)) waiter.resolve();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connected: (count) =>
      sockets.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs a full garbage collection: what once stopped an `AbortSignal.any` timeout from firing. */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

const result = { job_id: "job_1", attempt: 1, outcome: "succeeded", exit_code: 0 } as const;

describe("httpNodePlane call timeout", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("a call to a server that accepts and never answers rejects with a retryable timeout, even after a garbage collection", async () => {
    const server = await silentServer();
    cleanups.push(() => server.close());
    const pool = pooledFetch();
    cleanups.push(() => pool.close());
    const plane = httpNodePlane({
      gatewayUrl: server.url,
      appId: "app_1",
      nodeKey: "nk_1",
      fetch: pool.fetch,
      callTimeoutMs: 200,
    });

    const call = plane.result(result);
    const settled = call.catch((error: unknown) => error);
    await server.connected(1);
    collectGarbage();

    const error = await settled;
    expect(error).toBeInstanceOf(Error);
    expect(isRetryable(error)).toBe(true);
    await expect(call).rejects.toThrow(/abort|did not answer/i);
  });

  it("the caller's signal still ends a call before its deadline", async () => {
    const server = await silentServer();
    cleanups.push(() => server.close());
    const pool = pooledFetch();
    cleanups.push(() => pool.close());
    const plane = httpNodePlane({ gatewayUrl: server.url, appId: "app_1", nodeKey: "nk_1", fetch: pool.fetch });

    const halt = new AbortController();
    const call = plane.heartbeat({ running: [] } as never, halt.signal);
    await server.connected(1);
    halt.abort(new Error("agent stopping"));
    await expect(call).rejects.toThrow();
  });

  it("the result's delivery sends again after a call timed out, rather than waiting forever", async () => {
    const server = await silentServer();
    cleanups.push(() => server.close());
    const pool = pooledFetch();
    cleanups.push(() => pool.close());
    const plane = httpNodePlane({
      gatewayUrl: server.url,
      appId: "app_1",
      nodeKey: "nk_1",
      fetch: pool.fetch,
      callTimeoutMs: 100,
    });
    const halt = new AbortController();

    const delivery = reportResult(
      { plane, state: {} as StateFile, logger: pino({ level: "silent" }), halt: halt.signal, keepWorkspaces: false },
      result,
    ).catch((error: unknown) => error);
    await server.connected(1);
    collectGarbage();
    // A second connection is the retry: the first call timed out and the retry loop went on.
    await server.connected(2);
    halt.abort(new Error("test over"));
    expect(await delivery).toBeDefined();
  });
});
