/**
 * `jobs/list` search against a real nats-server, two gateways and two scheduler replicas:
 * `metadata` pairs (all must match), `name_prefix` and `schedule_id`, with the other
 * filters and paging; a cursor is good only for the listing it came from.
 */
import { Kvm } from "@nats-io/kv";
import { jobKey } from "../../shared/records/index.js";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import type { RpcRequest } from "../../shared/contract/index.js";
import { BUCKETS, decodeJson, encodeJson } from "../../shared/nats/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

const SCHEDULE = "sch_SSSSSSSSSSSSSSSSSSSS";

let nats: NatsHarness;
let nc: NatsConnection;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url, name: "test-job-search" });
  system = await startSystem(nats.url, { gateways: 2, schedulers: 2, registries: 1 });
  tenant = await createTenant(nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await nc?.close();
  await nats?.stop();
});

async function submit(
  client: ComputeClient,
  pool: string,
  fields: Partial<RpcRequest<"submitJob">> = {},
): Promise<string> {
  return (await client.call("submitJob", { type: "shell", command: ["true"], pool_id: pool, ...fields })).job_id;
}

/** Marks a job as made by a schedule, straight in the bucket (as a schedule's run is written). */
async function linkToSchedule(jobId: string, scheduleId: string): Promise<void> {
  const jobs = await new Kvm(nc).open(BUCKETS.jobs);
  const key = jobKey(tenant.app.app_id, tenant.business.business_id, jobId);
  const record = decodeJson((await jobs.get(key))!.value) as Record<string, unknown>;
  await jobs.put(key, encodeJson({ ...record, schedule_id: scheduleId }));
}

async function ids(body: RpcRequest<"listJobs">, client = user): Promise<string[]> {
  return (await client.call("listJobs", body)).items.map((item) => item.job_id);
}

/** Every job of a listing, page by page with `limit`, each page's cursor passed back with the same filters. */
async function pages(body: RpcRequest<"listJobs">, limit: number): Promise<string[][]> {
  const all: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await user.call("listJobs", { ...body, limit, ...(cursor === undefined ? {} : { cursor }) });
    all.push(page.items.map((item) => item.job_id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return all;
}

describe("jobs/list search", () => {
  it("filters by metadata pairs, all of which must match, a value split from its key at the first `=`", async () => {
    const a = await submit(user, "meta", { metadata: { team: "ml", run: "x=1" } });
    const b = await submit(user, "meta", { metadata: { team: "ml" } });
    const c = await submit(user, "meta", { metadata: { team: "web", run: "x=1" } });

    expect(await ids({ pool_id: "meta", metadata: "team=ml" })).toEqual([b, a]);
    expect(await ids({ pool_id: "meta", metadata: "run=x=1" })).toEqual([c, a]);
    expect(await ids({ pool_id: "meta", metadata: ["team=ml", "run=x=1"] })).toEqual([a]);
    expect(await ids({ pool_id: "meta", metadata: ["team=ml", "run=x"] })).toEqual([]);
  });

  it("filters by name prefix and by schedule, together with the other filters", async () => {
    const nightly = await submit(user, "named", { name: "nightly-report" });
    const other = await submit(user, "named", { name: "adhoc-report" });
    const unnamed = await submit(user, "named");
    await linkToSchedule(nightly, SCHEDULE);
    await linkToSchedule(unnamed, SCHEDULE);

    expect(await ids({ pool_id: "named", name_prefix: "nightly-" })).toEqual([nightly]);
    expect(await ids({ pool_id: "named", name_prefix: "adhoc" })).toEqual([other]);
    expect(await ids({ schedule_id: SCHEDULE })).toEqual([unnamed, nightly]);
    expect(await ids({ schedule_id: SCHEDULE, name_prefix: "nightly" })).toEqual([nightly]);
    expect(await ids({ schedule_id: SCHEDULE, state: "running" })).toEqual([]);
    expect(await ids({ schedule_id: "sch_TTTTTTTTTTTTTTTTTTTT" })).toEqual([]);
  });

  it("pages a filtered listing without gaps or repeats, a job submitted meanwhile not shifting later pages", async () => {
    const submitted: string[] = [];
    for (let index = 0; index < 7; index += 1) {
      submitted.push(await submit(user, "paged", { metadata: { batch: index % 2 === 0 ? "even" : "odd" } }));
    }
    const even = submitted.filter((_, index) => index % 2 === 0).reverse();

    const first = await user.call("listJobs", { pool_id: "paged", metadata: "batch=even", limit: 2 });
    expect(first.items.map((item) => item.job_id)).toEqual(even.slice(0, 2));
    await submit(user, "paged", { metadata: { batch: "even" } });
    const rest = await user.call("listJobs", {
      pool_id: "paged",
      metadata: "batch=even",
      limit: 10,
      cursor: first.next_cursor!,
    });
    expect(rest.items.map((item) => item.job_id)).toEqual(even.slice(2));
    expect(rest.next_cursor).toBeNull();

    expect((await pages({ pool_id: "paged", metadata: "batch=odd" }, 1)).flat()).toEqual(
      submitted.filter((_, index) => index % 2 === 1).reverse(),
    );
  });

  it("refuses a cursor that is no next_cursor of this listing with 400 request.invalid, never an empty page", async () => {
    await submit(user, "cursor");
    await submit(user, "cursor");
    const { next_cursor } = await user.call("listJobs", { pool_id: "cursor", limit: 1 });
    expect(next_cursor).not.toBeNull();

    const other = await createTenant(nc);
    const { client: stranger } = await signedInClient(system.gateways[1]!.baseUrl, other);
    const strangerJob = await submit(stranger, "cursor");
    await submit(stranger, "cursor");
    const strangerCursor = (await stranger.call("listJobs", { limit: 1 })).next_cursor;
    expect(strangerCursor).not.toBeNull();

    const refused = [
      // Malformed.
      "not a cursor",
      // A job id, not a cursor, whether of this business or another's.
      strangerJob,
      // Another business's cursor.
      strangerCursor!,
    ];
    for (const cursor of refused) {
      expect(await errorCodeOf(user.call("listJobs", { pool_id: "cursor", limit: 1, cursor }))).toBe("request.invalid");
    }
    // This listing's own cursor under other filters.
    expect(
      await errorCodeOf(user.call("listJobs", { pool_id: "cursor", limit: 1, cursor: next_cursor!, metadata: "a=b" })),
    ).toBe("request.invalid");
    const response = await user.raw("POST", "/api/compute/jobs/list", { pool_id: "cursor", cursor: strangerJob });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: "request.invalid" });
  });

  it("never finds another business's jobs, whatever the search", async () => {
    const mine = await submit(user, "tenancy", { name: "shared-name", metadata: { k: "v" } });
    const other = await createTenant(nc);
    const { client: stranger } = await signedInClient(system.gateways[1]!.baseUrl, other);
    const theirs = await submit(stranger, "tenancy", { name: "shared-name", metadata: { k: "v" } });

    for (const body of [
      { name_prefix: "shared" },
      { metadata: "k=v" },
      { name_prefix: "shared", metadata: "k=v", pool_id: "tenancy" },
    ]) {
      expect(await ids(body)).toEqual([mine]);
      expect(await ids(body, stranger)).toEqual([theirs]);
    }
  });
});
