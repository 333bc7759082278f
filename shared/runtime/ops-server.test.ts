import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { closeOpsServer, serverUrl, startOpsServer } from "./ops-server.js";

let server: Server | undefined;

afterEach(() => {
  server?.closeAllConnections();
});

describe("ops server", () => {
  it("answers /healthz 200 and /readyz 503 with each check while one fails", async () => {
    server = await startOpsServer({ host: "127.0.0.1", port: 0, checks: { nats: () => true, service: () => false } });
    const base = serverUrl(server);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ ready: false, checks: { nats: true, service: false } });
    await closeOpsServer(server);
  });

  it("serves /metrics unless told not to (a server on a public port), which answers it 404", async () => {
    server = await startOpsServer({ host: "127.0.0.1", port: 0, checks: {} });
    const metrics = await fetch(`${serverUrl(server)}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("# TYPE");
    await closeOpsServer(server);

    server = await startOpsServer({ host: "127.0.0.1", port: 0, checks: {}, metrics: false });
    const hidden = await fetch(`${serverUrl(server)}/metrics`);
    expect(hidden.status).toBe(404);
    expect(await hidden.json()).toMatchObject({ status: "ERROR", code: "route.not_found" });
    expect((await fetch(`${serverUrl(server)}/healthz`)).status).toBe(200);
    await closeOpsServer(server);
  });

  it("while starting, answers every other path and method 503 service.unavailable with Retry-After, and still /healthz and /readyz", async () => {
    server = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      checks: { gateway: () => false },
      metrics: false,
      starting: true,
    });
    const base = serverUrl(server);
    for (const [method, path] of [
      ["POST", "/api/compute/jobs/submit"],
      ["POST", "/api/auth/LOGIN_EMAIL"],
      ["GET", "/api/compute/jobs/job_x/logs"],
      ["GET", "/metrics"],
      ["GET", "/"],
    ] as const) {
      const response = await fetch(`${base}${path}`, method === "POST" ? { method, body: "{}" } : { method });
      expect(response.status, path).toBe(503);
      expect(response.headers.get("retry-after"), path).toBe("1");
      expect(await response.json(), path).toMatchObject({ status: "ERROR", code: "service.unavailable" });
    }
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    await closeOpsServer(server);
  });

  it("a close that begins while a keep-alive request is being answered ends that connection, so the close completes", async () => {
    let closing: Promise<void> | undefined;
    const ops = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      // The check runs inside the request: the close begins while its connection is busy.
      checks: { closeNow: () => ((closing ??= closeOpsServer(ops)), true) },
    });
    server = ops;
    const response = await fetch(`${serverUrl(ops)}/readyz`);
    expect(response.status).toBe(200);
    expect(response.headers.get("connection")).toBe("close");
    await closing;
    expect(ops.listening).toBe(false);
  });
});
