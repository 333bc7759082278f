/**
 * Webhooks under a crash: the webhooks service runs as a real process and is SIGKILLed
 * while deliveries are under way; a new one takes over. Every event must still reach the
 * receiver at least once, and every copy of one event must carry the same event id.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookEvent } from "../../shared/contract/index.js";
import type { ComputeClient } from "../harness/client.js";
import { runJobToEnd } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { startServiceProcess, type ServiceProcess } from "../harness/service-process.js";
import {
  createTenant,
  signedInClient,
  startBilling,
  startGateway,
  startLogRelay,
  startNodeRegistry,
  startScheduler,
  type RunningGateway,
  type RunningService,
  type Tenant,
} from "../harness/system.js";
import { startWebhookReceiver, type WebhookReceiver } from "../harness/webhook-receiver.js";

const JOBS = 8;

let nats: NatsHarness;
let gateway: RunningGateway;
const services: RunningService[] = [];
const webhooks: ServiceProcess[] = [];
let receiver: WebhookReceiver;
let tenant: Tenant;
let user: ComputeClient;
let env: Record<string, string>;

async function startWebhooksProcess(): Promise<ServiceProcess> {
  const child = startServiceProcess({ service: "webhooks", env });
  webhooks.push(child);
  await child.waitForLog((line) => line.msg === "webhooks ready", 60_000);
  return child;
}

beforeAll(async () => {
  nats = await startNats();
  env = {
    NATS_URL: nats.url,
    CJS_OPS_HOST: "127.0.0.1",
    CJS_OPS_PORT: "0",
    LOG_LEVEL: "info",
    CJS_WEBHOOKS_ALLOW_PRIVATE_URLS: "true",
    // Short tries and pauses: a delivery the killed process held comes back within seconds.
    CJS_WEBHOOK_TIMEOUT_MS: "1000",
    CJS_WEBHOOK_RETRY_SCHEDULE_SECONDS: "1",
  };
  services.push(
    await startScheduler(nats.url),
    await startNodeRegistry(nats.url),
    await startLogRelay(nats.url),
    await startBilling(nats.url),
  );
  gateway = await startGateway(nats.url);
  tenant = await createTenant(gateway.nc);
  ({ client: user } = await signedInClient(gateway.baseUrl, tenant));
}, 90_000);

afterAll(async () => {
  await Promise.all(webhooks.map((child) => child.kill()));
  await receiver?.close();
  await gateway?.stop();
  await Promise.all(services.map((service) => service.stop().catch(() => undefined)));
  await nats?.stop();
});

describe("the webhooks service SIGKILLed mid-way", () => {
  it("every job's event is still delivered at least once, and copies share the event id", async () => {
    const first = await startWebhooksProcess();
    // Holds every POST unanswered until the crash, so deliveries are in flight when it comes.
    let holding = true;
    let answerHeld: Array<() => void> = [];
    receiver = await startWebhookReceiver(() =>
      holding ? new Promise<number>((resolve) => answerHeld.push(() => resolve(200))) : 200,
    );
    await user.call("createWebhook", { url: receiver.url, events: ["job.succeeded"] });

    const jobIds: string[] = [];
    for (let index = 0; index < JOBS; index += 1) {
      jobIds.push(await runJobToEnd(user, gateway.baseUrl, tenant.app.app_id, `kill-${index}`));
      if (index === JOBS / 2) await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBeGreaterThan(0);
    }
    await first.kill();
    holding = false;
    for (const answer of answerHeld) answer();
    answerHeld = [];

    await startWebhooksProcess();
    const eventsOf = () =>
      receiver.received.map((received) => ({
        header: String(received.headers["cjs-event-id"]),
        event: JSON.parse(received.body) as WebhookEvent,
      }));
    const deliveredJobs = () => new Set(eventsOf().map(({ event }) => event.data.job?.job_id));
    await expect.poll(() => jobIds.filter((jobId) => !deliveredJobs().has(jobId)), { timeout: 45_000 }).toEqual([]);

    const idsByJob = new Map<string, Set<string>>();
    for (const { header, event } of eventsOf()) {
      expect(header).toBe(event.id);
      expect(event.type).toBe("job.succeeded");
      const jobId = event.data.job!.job_id;
      idsByJob.set(jobId, (idsByJob.get(jobId) ?? new Set()).add(event.id));
    }
    expect([...idsByJob.values()].every((ids) => ids.size === 1)).toBe(true);
  }, 90_000);
});
