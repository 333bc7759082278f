/**
 * `/readyz` tells the truth: 503 while NATS cannot be reached and while JetStream has no
 * leader for the service's streams (even though the connection is up), 200 once a
 * JetStream call succeeds. Runs real processes: a one-service process (node-registry,
 * through `runServiceProcess`) and the gateway (its own `main.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNatsCluster, type NatsClusterHarness } from "../harness/nats-cluster.js";
import { startNats } from "../harness/nats-server.js";
import { healthUrlOf, healthz, metricValue, readyz, serviceProcessEnv, untilReadyz } from "../harness/readiness.js";
import { type ServiceProcess, startServiceProcess } from "../harness/service-process.js";

const SERVICES = ["node-registry", "gateway"] as const;
/** The NATS connection name each process gives itself. */
const CONNECTION_NAMES = { "node-registry": "node-registry", gateway: "cjs-gateway" } as const;
/** Bound on a change of readiness: a start on a fresh server, or leaders lost or elected again (seconds each). */
const CHANGE_WAIT_MS = 45_000;

async function stopAll(children: ServiceProcess[]): Promise<void> {
  await Promise.all(children.map((child) => child.stop()));
}

describe("a service started while NATS is away", () => {
  it("serves /healthz 200 and /readyz 503 at once, logs the URL it waits for, and turns ready once NATS starts", async () => {
    await using nats = await startNats();
    await nats.kill();
    const children = SERVICES.map((service) =>
      startServiceProcess({ service, env: serviceProcessEnv(service, nats.url, 1) }),
    );
    try {
      // Listening from the start: a log line written before a wait begins is not seen by it.
      const waitLines = children.map((child) =>
        child.waitForLog((line) => line.msg === `waiting for NATS at ${nats.url}`),
      );
      const urls = await Promise.all(children.map((child) => healthUrlOf(child)));
      for (const [index, child] of children.entries()) {
        expect((await waitLines[index])?.nats_url, child.name).toBe(nats.url);
        expect(await healthz(urls[index]!), child.name).toBe(200);
        const answer = await readyz(urls[index]!);
        expect(answer.status, child.name).toBe(503);
        expect(answer.report?.checks.nats, child.name).toBe(false);
      }

      await nats.restart();
      await Promise.all(children.map((child, index) => untilReadyz(child, urls[index]!, 200, CHANGE_WAIT_MS)));
      for (const [index, child] of children.entries()) {
        expect((await readyz(urls[index]!)).report?.checks, child.name).toMatchObject({ nats: true, jetstream: true });
        expect(child.alive(), child.name).toBe(true);
      }
    } finally {
      await stopAll(children);
    }
  }, 90_000);
});

describe("on a three-node cluster", () => {
  let cluster: NatsClusterHarness;

  beforeAll(async () => {
    cluster = await startNatsCluster();
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it("losing two of three nodes turns /readyz 503 while the connection to the surviving node stays up; restarting them turns it 200", async () => {
    // Connected to node 0 only, which survives: the connection never drops, only JetStream's quorum does.
    const children = SERVICES.map((service) =>
      startServiceProcess({ service, env: serviceProcessEnv(service, cluster.urls[0]!, cluster.replicas) }),
    );
    try {
      const urls = await Promise.all(children.map((child) => healthUrlOf(child)));
      await Promise.all(children.map((child, index) => untilReadyz(child, urls[index]!, 200, CHANGE_WAIT_MS)));

      await Promise.all([cluster.kill(1), cluster.kill(2)]);
      await Promise.all(children.map((child, index) => untilReadyz(child, urls[index]!, 503, CHANGE_WAIT_MS)));
      for (const [index, child] of children.entries()) {
        expect((await readyz(urls[index]!)).report?.checks, child.name).toMatchObject({ nats: true, jetstream: false });
        // The probe that made /readyz 503 set the metrics in the same step.
        expect(await metricValue(urls[index]!, `cjs_jetstream_ready{service="${child.name}"}`), child.name).toBe(0);
        expect(
          await metricValue(urls[index]!, `cjs_jetstream_streams_without_leader{service="${child.name}"}`),
          child.name,
        ).toBeGreaterThan(0);
        expect(
          await metricValue(
            urls[index]!,
            `cjs_nats_connected{connection="${CONNECTION_NAMES[child.name as (typeof SERVICES)[number]]}"}`,
          ),
          child.name,
        ).toBe(1);
      }

      await Promise.all([cluster.restart(1), cluster.restart(2)]);
      await Promise.all(children.map((child, index) => untilReadyz(child, urls[index]!, 200, CHANGE_WAIT_MS)));
      for (const [index, child] of children.entries()) {
        expect(child.alive(), child.name).toBe(true);
        expect(
          await metricValue(urls[index]!, `cjs_jetstream_streams_without_leader{service="${child.name}"}`),
          child.name,
        ).toBe(0);
      }
    } finally {
      await stopAll(children);
    }
  }, 150_000);
});
