/**
 * A gateway that is starting answers every operation 503 `service.unavailable` with
 * `Retry-After`, never 404: a client retries such an answer instead of dropping its work.
 * The gateway under test is a real process (its own `main.ts`, whose placeholder holds the
 * API port while it starts); the services behind it run in this process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeJobsClient } from "../../clients/sdk/src/index.js";
import { freePort } from "../harness/free-port.js";
import { startNats } from "../harness/nats-server.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";
import { healthUrlOf, serviceProcessEnv, untilReadyz } from "../harness/readiness.js";
import { type ServiceProcess, startServiceProcess } from "../harness/service-process.js";
import { createTenant, signedInClient, startSystemOn, type RunningSystem, type Tenant } from "../harness/system.js";

const READY_WAIT_MS = 60_000;

let port: number;
let baseUrl: string;

function startGatewayProcess(nats: Pick<RunningNats, "url" | "replicas">): ServiceProcess {
  return startServiceProcess({
    service: "gateway",
    env: { ...serviceProcessEnv("gateway", nats.url, nats.replicas), CJS_PORT: String(port) },
  });
}

/** One answer as a client without retries sees it: status, Retry-After and code, or 0 when no connection was made. */
interface Seen {
  status: number;
  retryAfter: string | null;
  code: string | undefined;
}

async function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Seen> {
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { code?: string }).code;
    } catch {
      code = undefined;
    }
    return { status: response.status, retryAfter: response.headers.get("retry-after"), code };
  } catch {
    return { status: 0, retryAfter: null, code: undefined };
  }
}

beforeAll(async () => {
  port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
});

describe("a gateway process that is starting", () => {
  it("answers every operation 503 service.unavailable with Retry-After while it cannot serve, then serves", async () => {
    await using nats = await startNats();
    await nats.kill();
    const gateway = startGatewayProcess({ url: nats.url, replicas: 1 });
    try {
      // Listening from the start: a line logged before its wait begins is not seen.
      const waiting = gateway.waitForLog(
        (line) => typeof line.msg === "string" && line.msg.startsWith("waiting for NATS"),
      );
      const health = await healthUrlOf(gateway);
      // The placeholder holds the API port from the start; NATS is away, so the API cannot be built.
      await waiting;
      const operations: Array<[string, string, unknown]> = [
        ["POST", "/api/compute/jobs/submit", { type: "shell", command: ["true"] }],
        ["POST", "/api/auth/LOGIN_EMAIL", { email: "a@example.test", password: "x" }],
        ["POST", "/api/compute/nodes/poll", {}],
        ["GET", "/api/compute/jobs/job_00000000000000000000/logs", undefined],
        ["GET", "/openapi.json", undefined],
        ["GET", "/", undefined],
      ];
      for (const [method, path, body] of operations) {
        const seen = await send(method, path, { "x-app-id": "any" }, body);
        expect(seen, `${method} ${path}`).toEqual({ status: 503, retryAfter: "1", code: "service.unavailable" });
      }
      await nats.restart();
      await untilReadyz(gateway, health, 200, READY_WAIT_MS);
      expect((await send("GET", "/openapi.json", {})).status).toBe(200);
    } finally {
      await gateway.stop();
    }
  }, 120_000);
});

describe.each(NATS_TOPOLOGIES)("a gateway restarted under load, on $name", (topology) => {
  let nats: RunningNats;
  let system: RunningSystem;
  let tenant: Tenant;
  let headers: Record<string, string>;

  beforeAll(async () => {
    ({ nats, system } = await startSystemOn(topology, { gateways: 1, schedulers: 1, registries: 1 }));
    tenant = await createTenant(system.gateways[0]!.nc);
    const { tokens } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
    headers = { "x-app-id": tenant.app.app_id, authorization: `Bearer ${tokens.access_token}` };
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
    await nats?.stop();
  });

  it("answers no request 404 while it stops and starts again, and an SDK client's submits all succeed", async () => {
    let gateway = startGatewayProcess(nats);
    await untilReadyz(gateway, await healthUrlOf(gateway), 200, READY_WAIT_MS);
    const seen: Seen[] = [];
    let running = true;
    const loops = Array.from({ length: 4 }, async (_, index) => {
      while (running) {
        seen.push(
          index % 2 === 0
            ? await send("POST", "/api/compute/jobs/submit", headers, {
                type: "shell",
                command: ["true"],
                pool_id: "restart-no-nodes",
              })
            : await send("POST", "/api/compute/jobs/list", headers, {}),
        );
      }
    });
    const sdk = new ComputeJobsClient({
      baseUrl,
      appId: tenant.app.app_id,
      credentials: { accessToken: headers.authorization!.slice("Bearer ".length) },
      // Waits up to the 2 s a shedding gateway asks for (CJS_SHED_RETRY_AFTER_SECONDS): one just started on a busy machine may.
      retry: { maxRetries: 60, baseDelayMs: 50, maxDelayMs: 2000 },
    });
    const submits = (async () => {
      const ids: string[] = [];
      while (running)
        ids.push((await sdk.jobs.submit({ type: "shell", command: ["true"], pool_id: "restart-no-nodes" })).job_id);
      return ids;
    })();
    try {
      for (let restart = 0; restart < 2; restart += 1) {
        await gateway.stop();
        gateway = startGatewayProcess(nats);
        await untilReadyz(gateway, await healthUrlOf(gateway), 200, READY_WAIT_MS);
      }
    } finally {
      running = false;
      await Promise.all(loops);
      await submits.catch(() => undefined);
      await gateway.stop();
    }
    const statuses = new Set(seen.map((answer) => answer.status));
    expect(seen.filter((answer) => answer.status === 404)).toEqual([]);
    for (const answer of seen.filter((each) => each.status >= 400))
      expect(answer).toMatchObject({ status: 503, code: "service.unavailable", retryAfter: expect.any(String) });
    expect(statuses.has(200)).toBe(true);
    expect((await submits).length).toBeGreaterThan(0);
  }, 180_000);
});
