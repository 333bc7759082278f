/**
 * `/metrics` as Prometheus scrapes it in production: on each process's ops port, never on
 * the gateway's public API port (it reports every operator pool of every tenant). Runs every
 * service as a real process of its own (`startServiceProcess`), as production does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { healthUrlOf, metricValue, serviceProcessEnv, untilReadyz } from "../harness/readiness.js";
import { promtool } from "../harness/promtool.js";
import { type ServiceProcess, startServiceProcess } from "../harness/service-process.js";

const SERVICES = ["gateway", "scheduler", "node-registry", "log-relay", "billing", "webhooks"] as const;
const READY_WAIT_MS = 45_000;

let nats: NatsHarness;
const children = new Map<(typeof SERVICES)[number], ServiceProcess>();
const opsUrls = new Map<(typeof SERVICES)[number], string>();
let apiUrl: string;

beforeAll(async () => {
  nats = await startNats();
  for (const service of SERVICES)
    children.set(service, startServiceProcess({ service, env: serviceProcessEnv(service, nats.url, 1) }));
  const gateway = children.get("gateway")!;
  const listening = gateway.waitForLog(
    (line) => typeof line.msg === "string" && line.msg.startsWith("gateway listening on"),
    READY_WAIT_MS,
  );
  // Every wait begins at once: a line logged before its wait begins is not seen.
  const urls = await Promise.all(
    [...children].map(async ([service, child]) => [service, await healthUrlOf(child)] as const),
  );
  for (const [service, url] of urls) opsUrls.set(service, url);
  await Promise.all(
    [...children].map(([service, child]) => untilReadyz(child, opsUrls.get(service)!, 200, READY_WAIT_MS)),
  );
  apiUrl = String((await listening).address);
}, 120_000);

afterAll(async () => {
  await Promise.all([...children.values()].map((child) => child.stop()));
  await nats?.stop();
});

describe("/metrics", () => {
  it("is not served on the gateway's public API port: 404 route.not_found and no series", async () => {
    expect((await fetch(`${apiUrl}/healthz`)).status).toBe(200);
    const response = await fetch(`${apiUrl}/metrics`);
    expect(response.status).toBe(404);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ status: "ERROR", code: "route.not_found" });
    expect(text).not.toContain("cjs_");
  });

  it.each(SERVICES)(
    "of %s passes `promtool check metrics`, the linter Prometheus' own tools apply",
    async (service) => {
      const exposition = await (await fetch(`${opsUrls.get(service)!}/metrics`)).text();
      expect(exposition).toMatch(/^process_cpu_seconds_total \d/m);
      expect(await promtool(["check", "metrics"], { input: exposition })).toBe("");
    },
  );

  it("is served on the gateway's ops port, with its NATS connection and JetStream probe", async () => {
    const ops = opsUrls.get("gateway")!;
    expect(ops).not.toBe(apiUrl);
    expect(await metricValue(ops, 'cjs_nats_connected{connection="cjs-gateway"}')).toBe(1);
    expect(await metricValue(ops, 'cjs_jetstream_ready{service="gateway"}')).toBe(1);
    expect(await metricValue(ops, 'cjs_jetstream_streams_without_leader{service="gateway"}')).toBe(0);
  });

  it("on billing's ops port, reports the metering backlog and the ledger audit's from their consumers", async () => {
    const ops = opsUrls.get("billing")!;
    // Read once per probe interval after the start: wait for the first read.
    await expect
      .poll(
        () => metricValue(ops, 'cjs_jetstream_consumer_pending{stream="CJS_METERING",consumer="billing-metering"}'),
        { timeout: 10_000 },
      )
      .toBe(0);
    expect(
      await metricValue(ops, 'cjs_jetstream_consumer_redelivered{stream="CJS_METERING",consumer="billing-metering"}'),
    ).toBe(0);
    expect(
      await metricValue(ops, 'cjs_jetstream_consumer_pending{stream="KV_cjs_jobs",consumer="billing-ledger-audit"}'),
    ).toBeGreaterThanOrEqual(0);
  });

  it("on log-relay's ops port, has its own metrics", async () => {
    const ops = opsUrls.get("log-relay")!;
    expect(await metricValue(ops, "cjs_log_lines_stored_total")).toBe(0);
    expect(await metricValue(ops, "cjs_log_lines_dropped_total")).toBe(0);
    expect(await metricValue(ops, 'cjs_nats_connected{connection="log-relay"}')).toBe(1);
  });
});
