/**
 * `jobs/list` answered from each scheduler replica's index of the job bucket: a list that
 * follows a submit shows the job whichever replica took the submit and whichever answers
 * the list, and a tenant's list never holds another tenant's job.
 */
import { Kvm } from "@nats-io/kv";
import { jobKey } from "../../shared/records/index.js";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { BUCKETS, decodeJson, encodeJson } from "../../shared/nats/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { listAllJobs } from "../harness/listing.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startScheduler,
  startSystem,
  type RunningService,
  type RunningSystem,
} from "../harness/system.js";

/** Records in the bucket before the jobs a just-started replica is asked for. */
const HISTORY = 10_000;

let nats: NatsHarness;
let nc: NatsConnection;
let system: RunningSystem;
const extraSchedulers: RunningService[] = [];

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  system = await startSystem(nats.url, { gateways: 2, schedulers: 2, registries: 1 });
});

afterAll(async () => {
  await Promise.all(extraSchedulers.map((scheduler) => scheduler.stop().catch(() => undefined)));
  await system?.stop();
  await nc?.close();
  await nats?.stop();
});

async function clientOf(tenant: Awaited<ReturnType<typeof createTenant>>, gateway = 0): Promise<ComputeClient> {
  return (await signedInClient(system.gateways[gateway]!.baseUrl, tenant)).client;
}

async function submit(client: ComputeClient, pool: string, labels: Record<string, string> = {}): Promise<string> {
  return (await client.call("submitJob", { type: "shell", command: ["true"], pool_id: pool, labels })).job_id;
}

describe("jobs/list across scheduler replicas", () => {
  it("shows a job in the list that follows its submit, whichever of two replicas takes each request", async () => {
    const tenant = await createTenant(system.gateways[0]!.nc);
    const [onFirst, onSecond] = [await clientOf(tenant, 0), await clientOf(tenant, 1)];
    const submitted: string[] = [];
    // Each request goes to either replica, so about half of these lists are answered by
    // the replica that did not write the job. On loopback its watch has usually delivered
    // the write by then anyway; the next test is the one a list that does not wait fails.
    for (let round = 0; round < 40; round += 1) {
      submitted.push(await submit(round % 2 === 0 ? onFirst : onSecond, "ryw"));
      const page = await (round % 2 === 0 ? onSecond : onFirst).call("listJobs", { pool_id: "ryw", limit: 3 });
      expect(page.items.map((item) => item.job_id)).toEqual(submitted.slice(-3).reverse());
    }
  });

  it("a replica that has just started answers its first list with every job written before it", async () => {
    const tenant = await createTenant(system.gateways[0]!.nc);
    const client = await clientOf(tenant);
    // A history for the new replica's watch to replay first: another business's finished
    // jobs, written straight into the bucket, older in the stream than the jobs listed.
    const historian = await clientOf(await createTenant(system.gateways[0]!.nc));
    const template = await historian.call("retrieveJob", { job_id: await submit(historian, "history") });
    const { app_id, business_id } = template.job;
    const jobs = await new Kvm(nc).open(BUCKETS.jobs);
    const raw = decodeJson((await jobs.get(jobKey(app_id, business_id, template.job.job_id)))!.value) as Record<
      string,
      unknown
    >;
    for (let batch = 0; batch < HISTORY / 500; batch += 1) {
      await Promise.all(
        Array.from({ length: 500 }, (_, index) => {
          const jobId = `job_0000${String(batch * 500 + index).padStart(16, "0")}`;
          return jobs.put(
            jobKey(app_id, business_id, jobId),
            encodeJson({ ...raw, job_id: jobId, state: "succeeded", pending_reason: null }),
          );
        }),
      );
    }
    const submitted: string[] = [];
    for (let index = 0; index < 30; index += 1) submitted.push(await submit(client, "late"));

    await Promise.all(system.schedulers.map((scheduler) => scheduler.stop()));
    const late = await startScheduler(nats.url);
    extraSchedulers.push(late);

    // The new replica is the only one left to answer, at once.
    const listed = await listAllJobs(client, "late");
    expect(listed.map((job) => job.job_id)).toEqual(submitted.reverse());
  });
});

describe("jobs/list and tenancy", () => {
  it("never shows a tenant another tenant's jobs, whatever the filter, and refuses another tenant's cursor", async () => {
    const gateway = system.gateways[0]!;
    const first = await createTenant(gateway.nc);
    const sameApp = await createTenant(gateway.nc, { appId: first.app.app_id });
    const otherApp = await createTenant(gateway.nc);
    const tenants = await Promise.all(
      [first, sameApp, otherApp].map(async (tenant) => ({
        tenant,
        client: await clientOf(tenant),
        jobs: [] as string[],
      })),
    );
    // The same pool and labels in every tenant, submitted in turns so their ids interleave.
    for (let round = 0; round < 5; round += 1) {
      for (const tenant of tenants) tenant.jobs.push(await submit(tenant.client, "shared-name", { team: "a" }));
    }

    for (const { tenant, client, jobs } of tenants) {
      const own = [...jobs].reverse();
      const bodies = [
        {},
        { pool_id: "shared-name" },
        { label: "team=a" },
        { state: "queued" as const },
        { type: "shell" },
      ];
      for (const body of bodies) {
        const page = await client.call("listJobs", { limit: 200, ...body });
        for (const item of page.items) {
          expect(item).toMatchObject({ app_id: tenant.app.app_id, business_id: tenant.business.business_id });
        }
        expect(page.items.map((item) => item.job_id)).toEqual(own);
      }
      for (const other of tenants.filter((each) => each.tenant !== tenant)) {
        const foreign = (await other.client.call("listJobs", { limit: 1 })).next_cursor!;
        expect(await errorCodeOf(client.call("listJobs", { limit: 200, cursor: foreign }))).toBe("request.invalid");
      }
    }
  });
});
