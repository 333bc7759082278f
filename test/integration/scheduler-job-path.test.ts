/**
 * The scheduler's handlers on the job path against a real nats-server, with the reads of
 * each bucket counted: what a result, a release and a poll read, and that each still
 * holds when the copy it started from is no longer current (the compare-and-set is
 * refused, the record read again and checked afresh). The context is built by hand, so
 * no other replica, watch or placement round moves anything a test did not.
 */
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { endAttempt } from "../../services/scheduler/jobs/attempt-metering.js";
import { ActiveJobs } from "../../services/scheduler/queue/active-jobs.js";
import { ClusterView } from "../../services/scheduler/placement/cluster-view.js";
import { loadConfig } from "../../services/scheduler/config.js";
import { type JobRevision, JobsWatch } from "../../services/scheduler/partitions/jobs-watch.js";
import { OwnShare } from "../../services/scheduler/placement/own-share.js";
import { AllocationWriter } from "../../services/scheduler/placement/reservations.js";
import { QueueDepthGuard } from "../../services/scheduler/queue/job-queue.js";
import { QueuedJobs } from "../../services/scheduler/queue/queued-jobs.js";
import { KeyQuotaRecord } from "../../services/scheduler/jobs/key-quota-rules.js";
import { DeferredStarts } from "../../services/scheduler/jobs/deferred-starts.js";
import { delivered, poll, writeStart } from "../../services/scheduler/jobs/poll.js";
import { deliveredAttempt } from "../../services/scheduler/jobs/delivered-attempt.js";
import { recordResult } from "../../services/scheduler/jobs/record-result.js";
import { createJob, newJobId, submitJob } from "../../services/scheduler/jobs/submit-job.js";
import { release, releaseSoon, reserve } from "../../services/scheduler/placement/reservations.js";
import { wakeNode } from "../../services/scheduler/placement/placer.js";
import type { SchedulerContext } from "../../services/scheduler/scheduler-context.js";
import { openSchedulerStore, type SchedulerStore } from "../../services/scheduler/scheduler-store.js";
import { assign, cancel, start, timeOut } from "../../services/scheduler/jobs/transitions.js";
import { changeJob } from "../../services/scheduler/jobs/change-job.js";
import { type MeteringMessage, SubmitJobCommand } from "../../shared/contract/index.js";
import { isAppError } from "../../shared/errors/index.js";
import { decodeJson, encodeJson, JsonBucket, kvKey, subjects } from "../../shared/nats/index.js";
import { newId } from "../../shared/runtime/index.js";
import {
  JOB_PARTITIONS,
  AllocationRecord,
  JobRecord,
  jobKey,
  jobPartition,
  type NodeRecord,
  operatorPoolKey,
  selfHostedPoolKey,
} from "../../shared/records/index.js";
import { countingKv } from "../harness/counting-kv.js";
import { nodeRecord, queuedJobRecord } from "../harness/job-records.js";
import { ManualClock } from "../harness/manual-clock.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";

const APP = "app_jobpath";
const BUSINESS = newId("biz");
const NODE = newId("nod");
const KEY = newId("key");
const OTHER_BUSINESS = newId("biz");
const OTHER_NODE = newId("nod");

let nats: NatsHarness;
let nc: NatsConnection;
let tap: NatsConnection;
let ctx: SchedulerContext;
/** The replica's copy of its active jobs (`ctx.active`). */
let activeJobs: ActiveJobs;
/** The same buckets, uncounted: what a test sets up and checks. */
let raw: SchedulerStore;
let reads: { jobs: () => number; allocations: () => number; keyQuotas: () => number };
let counted = { jobs: 0, allocations: 0, keyQuotas: 0 };
/** Writes of job records through the replica's store (creates and compare-and-sets). */
let jobWrites: () => number;
const clock = new ManualClock(Date.parse("2026-11-23T12:00:00.000Z"));

/** The result handler as the scheduler serves it, with a queue of its own (empty: no job to take next). */
function results() {
  return recordResult(ctx, new QueuedJobs());
}

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  tap = await connect({ servers: nats.url });
  const config = loadConfig({ NATS_URL: nats.url });
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  raw = await openSchedulerStore(nc, config, logger);
  const jobs = countingKv(raw.jobs.kv);
  const allocations = countingKv(raw.allocations.kv);
  const keyQuotas = countingKv(raw.keyQuotas.kv);
  const store: SchedulerStore = {
    ...raw,
    jobs: new JsonBucket(jobs.kv, JobRecord),
    allocations: new JsonBucket(allocations.kv, AllocationRecord),
    keyQuotas: new JsonBucket(keyQuotas.kv, KeyQuotaRecord),
  };
  reads = { jobs: jobs.reads, allocations: allocations.reads, keyQuotas: keyQuotas.reads };
  jobWrites = jobs.writes;
  const view = new ClusterView(store, () => undefined);
  const active = new ActiveJobs();
  activeJobs = active;
  // The replica's own writes reach its active jobs at once, as its watch hands them on (`JobsWatch.noteWritten`).
  store.jobs.onWritten = (key, revision, record, data) => active.apply(ownRevision(key, revision, record, data));
  ctx = {
    nc,
    logger,
    clock,
    config,
    store,
    view,
    allocations: new AllocationWriter(store, view),
    ownShare: new OwnShare("scheduler-job-path"),
    queueDepth: new QueueDepthGuard({ size: 0 }, 1000),
    jobsWatch: new JobsWatch(store, []),
    concurrency: active,
    active,
    instance: "scheduler-job-path",
    // The one replica: it owns every partition.
    ownership: {
      owned: new Set(Array.from({ length: JOB_PARTITIONS }, (_, partition) => partition)),
      ownerOf: () => "scheduler-job-path",
      holders: () => new Map(),
    },
    starts: new DeferredStarts(config.CJS_START_WRITE_DELAY_MS, (jobKey, start) => writeStart(ctx, jobKey, start)),
    requestPlacement: () => undefined,
  };
});

afterAll(async () => {
  await tap?.close();
  await nc?.close();
  await nats?.stop();
});

beforeEach(async () => {
  // Each test starts from an empty node and counts its own reads; a release an earlier test left waiting for company is written first.
  await ctx.allocations.flushSoon();
  await ctx.starts.flush();
  await raw.allocations.delete(NODE);
  ctx.view.allocations.delete(NODE);
  counted = { jobs: reads.jobs(), allocations: reads.allocations(), keyQuotas: reads.keyQuotas() };
});

/** Reads of each bucket since the test began. */
function readsSoFar() {
  return {
    jobs: reads.jobs() - counted.jobs,
    allocations: reads.allocations() - counted.allocations,
    keyQuotas: reads.keyQuotas() - counted.keyQuotas,
  };
}

/** A queued job's record as submit writes it, with `overrides` applied. */
function queuedJob(jobId: string, overrides: Partial<JobRecord> = {}): JobRecord {
  return queuedJobRecord({
    job_id: jobId,
    app_id: APP,
    business_id: BUSINESS,
    user_id: newId("usr"),
    key_id: KEY,
    key_slot: false,
    resources: { cpu: 1, memory_mb: 256, gpu: 0 },
    pool_id: "jobpath",
    pool_key: selfHostedPoolKey(BUSINESS, "jobpath"),
    created_at: new Date(clock.now()).toISOString(),
    ...overrides,
  });
}

/** Writes a job assigned to the node (running when `running`) and its reservation; the view learns the reservation. */
async function placedJob(options: { running?: boolean; overrides?: Partial<JobRecord>; viewLearns?: boolean } = {}) {
  const jobId = newJobId(clock.now());
  const key = jobKey(APP, BUSINESS, jobId);
  let record = assign(queuedJob(jobId, options.overrides), NODE, clock.now());
  if (options.running) record = start(record, record.attempt, NODE, clock.now());
  const revision = await raw.jobs.create(key, record);
  const allocation = await raw.allocations.upsert(NODE, (current) => ({
    node_id: NODE,
    attempts: {
      ...(current?.attempts ?? {}),
      [jobId]: {
        job_key: key,
        attempt: record.attempt,
        resources: record.resources,
        assigned_at: new Date(clock.now()).toISOString(),
      },
    },
  }));
  if (options.viewLearns !== false && allocation) ctx.view.learn(NODE, allocation.value, allocation.revision);
  return { jobId, key, record, revision };
}

const caller = { app_id: APP, business_id: BUSINESS, node_id: NODE };

/** A job record as the replica's watch hands it to its pictures. */
function ownRevision(key: string, revision: number, record: JobRecord, data = encodeJson(record)): JobRevision {
  return { key, revision, record: record as unknown as Record<string, unknown>, data };
}

/** Every message on these subjects, in the order nats-server routed them. */
async function listen(
  ...subjectFilters: string[]
): Promise<{ seen: Array<{ subject: string; data: Uint8Array }>; stop(): Promise<void> }> {
  const seen: Array<{ subject: string; data: Uint8Array }> = [];
  const subscriptions: Subscription[] = subjectFilters.map((filter) =>
    tap.subscribe(filter, {
      callback: (_error, msg) => {
        seen.push({ subject: msg.subject, data: msg.data });
      },
    }),
  );
  await tap.flush();
  return {
    seen,
    async stop() {
      // What nats-server routed before the flush's answer has reached the tap.
      await tap.flush();
      for (const subscription of subscriptions) subscription.unsubscribe();
    },
  };
}

describe("a node's result", () => {
  it("reads the job once: its key comes from the view, its reservation is freed from the view's copy, and a key without a concurrency quota is not read", async () => {
    const { jobId, key } = await placedJob({ running: true });

    const answer = await results()({
      caller,
      body: { job_id: jobId, attempt: 1, outcome: "succeeded", exit_code: 0 },
    });

    expect(answer).toEqual({ job_id: jobId, attempt: 1, state: "succeeded", duplicate: false });
    // The release waits a moment for the node's next reservation to share its write; none comes here.
    await ctx.allocations.flushSoon();
    expect(readsSoFar()).toEqual({ jobs: 1, allocations: 0, keyQuotas: 0 });
    expect((await raw.jobs.get(key))?.value.state).toBe("succeeded");
    expect((await raw.allocations.get(NODE))?.value.attempts[jobId]).toBeUndefined();
    expect(ctx.view.allocations.get(NODE)?.value.attempts[jobId]).toBeUndefined();
  });

  it("of a running attempt this replica last wrote (its active jobs' copy): no read of the job at all", async () => {
    const { jobId, key, record, revision } = await placedJob({ running: true });
    activeJobs.apply(ownRevision(key, revision, record));

    const answer = await results()({
      caller,
      body: { job_id: jobId, attempt: 1, outcome: "succeeded", exit_code: 0 },
    });

    expect(answer).toEqual({ job_id: jobId, attempt: 1, state: "succeeded", duplicate: false });
    expect(readsSoFar().jobs).toBe(0);
    expect((await raw.jobs.get(key))?.value.state).toBe("succeeded");
    expect(ctx.active.latest(key)).toBeUndefined();
  });

  it("from a copy the record has moved past: the write is refused, the record read, and the result recorded on it", async () => {
    const { jobId, key, record, revision } = await placedJob({ running: true });
    activeJobs.apply(ownRevision(key, revision, record));
    // Another writer touched the record since (same attempt, still running): the copy is one revision behind.
    await raw.jobs.update(key, { ...record, updated_at: new Date(clock.now() + 1).toISOString() }, revision);

    const answer = await results()({
      caller,
      body: { job_id: jobId, attempt: 1, outcome: "succeeded", exit_code: 0 },
    });

    expect(answer).toEqual({ job_id: jobId, attempt: 1, state: "succeeded", duplicate: false });
    expect(readsSoFar().jobs).toBe(1);
    expect((await raw.jobs.get(key))?.value.state).toBe("succeeded");
  });

  it("with no copy of the node's record in the view: the key is found from the reservation, and the result is recorded", async () => {
    const { jobId, key } = await placedJob({ running: true, viewLearns: false });

    const answer = await results()({
      caller,
      body: { job_id: jobId, attempt: 1, outcome: "failed", exit_code: 3 },
    });

    expect(answer.state).toBe("failed");
    await ctx.allocations.flushSoon();
    expect(readsSoFar().jobs).toBe(1);
    expect((await raw.jobs.get(key))?.value).toMatchObject({ state: "failed", exit_code: 3 });
    expect((await raw.allocations.get(NODE))?.value.attempts[jobId]).toBeUndefined();
  });

  it("for another business's job the node never held: not found, and the job is unchanged", async () => {
    const jobId = newJobId(clock.now());
    const otherKey = jobKey("app_other", OTHER_BUSINESS, jobId);
    const record = start(
      assign(queuedJob(jobId, { app_id: "app_other", business_id: OTHER_BUSINESS }), OTHER_NODE, clock.now()),
      1,
      OTHER_NODE,
      clock.now(),
    );
    const revision = await raw.jobs.create(otherKey, record);

    const refused = await results()({
      caller,
      body: { job_id: jobId, attempt: 1, outcome: "succeeded", exit_code: 0 },
    }).catch((error: unknown) => error);

    expect(isAppError(refused) && refused.code).toBe("resource.not_found");
    expect((await raw.jobs.get(otherKey))?.revision).toBe(revision);
  });

  it("for an attempt the record has moved past: job.stale_attempt, nothing published, nothing changed", async () => {
    const { jobId, key, record } = await placedJob({
      running: true,
      overrides: { pool_key: operatorPoolKey(APP, "default", []), pool_id: "default" },
    });
    // The record is now at a later attempt on the same node (the node's reservation of attempt 1 is still there).
    const later = start(assign({ ...record, state: "queued", node_id: null }, NODE, clock.now()), 2, NODE, clock.now());
    const moved = await raw.jobs.update(key, later, (await raw.jobs.get(key))!.revision);
    const metering = await listen(subjects.metering(jobId));

    const refused = await results()({
      caller,
      body: { job_id: jobId, attempt: 1, outcome: "succeeded", exit_code: 0 },
    }).catch((error: unknown) => error);
    await metering.stop();

    expect(isAppError(refused) && refused.code).toBe("job.stale_attempt");
    expect(metering.seen).toEqual([]);
    expect((await raw.jobs.get(key))?.revision).toBe(moved);
  });

  it("on an operator pool: the job is read once, and its metering message goes out before the write that ends the attempt", async () => {
    const { jobId, key } = await placedJob({
      running: true,
      overrides: { pool_key: operatorPoolKey(APP, "default", []), pool_id: "default" },
    });
    const order = await listen(subjects.metering(jobId), `$KV.cjs_jobs.${key}`);

    await results()({ caller, body: { job_id: jobId, attempt: 1, outcome: "succeeded", exit_code: 0 } });
    await order.stop();

    expect(readsSoFar().jobs).toBe(1);
    expect(order.seen.map((message) => message.subject)).toEqual([subjects.metering(jobId), `$KV.cjs_jobs.${key}`]);
    expect(decodeJson(order.seen[0]!.data)).toEqual({
      job_key: key,
      job_id: jobId,
      attempt: 1,
      reason: "result",
    } satisfies MeteringMessage);
  });
});

describe("ending an attempt from a record that has moved on", () => {
  it("the write on the old revision is refused; the record is read again, and the attempt running now gets its message before it ends", async () => {
    const { jobId, key, record, revision } = await placedJob({
      running: true,
      overrides: { pool_key: operatorPoolKey(APP, "default", []), pool_id: "default" },
    });
    // Another replica requeued attempt 1 and attempt 2 started, after this caller read the record.
    const second = start(
      assign({ ...record, state: "queued", node_id: null }, NODE, clock.now()),
      2,
      NODE,
      clock.now(),
    );
    await raw.jobs.update(key, second, revision);
    const order = await listen(subjects.metering(jobId), `$KV.cjs_jobs.${key}`);

    const { before, after } = await endAttempt(ctx, key, "timeout", (job) => timeOut(job, clock.now()), {
      value: record,
      revision,
    });
    await order.stop();

    expect(before.attempt).toBe(2);
    expect(after).toMatchObject({ state: "timed_out", attempt: 2 });
    const attempts = order.seen.map((message) =>
      message.subject === subjects.metering(jobId)
        ? `metering ${(decodeJson(message.data) as MeteringMessage).attempt}`
        : "write",
    );
    // The write on the held revision is refused after its attempt was announced (billing settles that one from the record).
    expect(attempts).toEqual(["metering 1", "write", "metering 2", "write"]);
  });
});

describe("release", () => {
  it("from the view's copy that holds the attempt: no read", async () => {
    const { jobId, record } = await placedJob();

    await release(ctx, NODE, jobId, record.attempt);

    expect(readsSoFar().allocations).toBe(0);
    expect((await raw.allocations.get(NODE))?.value.attempts[jobId]).toBeUndefined();
  });

  it("from a copy that another reservation overtook: the write is refused, the record read, and only this attempt freed", async () => {
    const { jobId, record } = await placedJob();
    const other = await placedJob({ viewLearns: false });

    await release(ctx, NODE, jobId, record.attempt);

    const stored = (await raw.allocations.get(NODE))?.value;
    expect(Object.keys(stored?.attempts ?? {})).toEqual([other.jobId]);
    expect(ctx.view.allocations.get(NODE)?.value).toEqual(stored);
  });

  it("with a copy that has not seen the reservation (another replica made it): the record is read and the attempt freed", async () => {
    await placedJob();
    const unseen = await placedJob({ viewLearns: false });

    await release(ctx, NODE, unseen.jobId, unseen.record.attempt);

    expect(readsSoFar().allocations).toBe(1);
    expect((await raw.allocations.get(NODE))?.value.attempts[unseen.jobId]).toBeUndefined();
  });
});

/** A node of the job path's pool, online, running `shell`, with `slots` slots. */
function jobPathNode(nodeId: string, slots: number): NodeRecord {
  return nodeRecord({
    node_id: nodeId,
    app_id: APP,
    business_id: BUSINESS,
    pool_id: "jobpath",
    pool_key: selfHostedPoolKey(BUSINESS, "jobpath"),
    capacity: { cpu: 64, memory_mb: 65_536, gpu: 0, slots },
    created_at: "2026-11-23T12:00:00.000Z",
  });
}

describe("the allocation writer", () => {
  const at = "2026-11-23T12:00:00.000Z";
  const node = (slots: number): NodeRecord => jobPathNode(NODE, slots);
  const attemptOf = (jobId: string) => ({
    job_key: jobKey(APP, BUSINESS, jobId),
    attempt: 1,
    resources: { cpu: 1, memory_mb: 256, gpu: 0 },
    assigned_at: at,
  });

  it("puts reserves asked for at once into one write per turn, and grants exactly the room there is", async () => {
    const running = await placedJob();
    const writes = await listen(`$KV.cjs_allocations.${NODE}`);
    const jobIds = Array.from({ length: 10 }, () => newJobId(clock.now()));

    const granted = await Promise.all(
      jobIds.map((jobId) => reserve(ctx, node(4), jobId, attemptOf(jobId), "shell", clock.now())),
    );
    await writes.stop();

    expect(granted.filter(Boolean)).toHaveLength(3);
    const stored = (await raw.allocations.get(NODE))?.value;
    expect(Object.keys(stored?.attempts ?? {}).sort()).toEqual(
      [running.jobId, ...jobIds.filter((_, index) => granted[index])].sort(),
    );
    // The first reserve writes alone; the nine that asked meanwhile go together in the next write.
    expect(writes.seen.length).toBeLessThanOrEqual(2);
  });

  it("applies a release and a reserve asked for at once, each as its caller asked", async () => {
    const { jobId, record } = await placedJob();
    const newcomer = newJobId(clock.now());

    const [, granted] = await Promise.all([
      release(ctx, NODE, jobId, record.attempt),
      reserve(ctx, node(1), newcomer, attemptOf(newcomer), "shell", clock.now()),
    ]);

    expect(granted).toBe(true);
    expect(Object.keys((await raw.allocations.get(NODE))?.value.attempts ?? {})).toEqual([newcomer]);
  });

  it("writes a finished attempt's release soon with the node's next reservation, one write, the slot counted free meanwhile", async () => {
    const { jobId, record } = await placedJob();
    ctx.view.nodes.set(NODE, { value: node(1), revision: 1 });
    const before = (await raw.allocations.get(NODE))!.revision;

    releaseSoon(ctx, NODE, jobId, record.attempt);
    // Placement sees the one slot free before anything is written.
    expect(ctx.view.nodeView(NODE, clock.now())?.used.slots).toBe(0);
    expect((await raw.allocations.get(NODE))!.revision).toBe(before);
    const newcomer = newJobId(clock.now());
    const granted = await reserve(ctx, node(1), newcomer, attemptOf(newcomer), "shell", clock.now());

    const after = (await raw.allocations.get(NODE))!;
    expect(granted).toBe(true);
    expect(Object.keys(after.value.attempts)).toEqual([newcomer]);
    expect(after.revision - before).toBe(1);
    ctx.view.nodes.delete(NODE);
  });

  it("writes a finished attempt's release soon on its own when no other change of the node comes", async () => {
    const { jobId, record } = await placedJob();

    releaseSoon(ctx, NODE, jobId, record.attempt);

    await expect.poll(async () => (await raw.allocations.get(NODE))?.value.attempts[jobId]).toBeUndefined();
    expect(readsSoFar().allocations).toBe(0);
  });
});

describe("releases of one node that arrive together", () => {
  it("go in one write after the one under way, from the view's copy: nothing read, nothing refused, each attempt freed and the others kept", async () => {
    const placed = [];
    for (let index = 0; index < 10; index += 1) placed.push(await placedJob());
    const kept = await placedJob();
    const before = (await raw.allocations.get(NODE))!.revision;

    await Promise.all(placed.map(({ jobId, record }) => release(ctx, NODE, jobId, record.attempt)));

    const after = (await raw.allocations.get(NODE))!;
    expect(readsSoFar().allocations).toBe(0);
    expect(after.revision - before).toBe(2);
    expect(Object.keys(after.value.attempts)).toEqual([kept.jobId]);
    expect(ctx.view.allocations.get(NODE)).toEqual(after);
  });
});

describe("the key's concurrency slot when a job ends", () => {
  it("a record that does not say whether it holds one (an older replica wrote it): the key's record is read and the slot freed", async () => {
    const { jobId, key } = await placedJob({ running: true, overrides: { key_slot: undefined } });
    expect(Object.keys((await raw.jobs.get(key))!.value)).not.toContain("key_slot");
    await raw.keyQuotas.create(kvKey(KEY), {
      key_id: KEY,
      app_id: APP,
      business_id: BUSINESS,
      admitted: [],
      active: { [jobId]: clock.now() },
      max_concurrent: 1,
    });

    await results()({ caller, body: { job_id: jobId, attempt: 1, outcome: "succeeded", exit_code: 0 } });

    expect(readsSoFar().keyQuotas).toBe(1);
    expect((await raw.keyQuotas.get(kvKey(KEY)))?.value.active).toEqual({});
  });
});

describe("a node's poll", () => {
  it("reads the node's reservations and each reserved job once, gives the assigned ones at once and writes their starts after, at the time given", async () => {
    const first = await placedJob();
    const second = await placedJob();
    const running = await placedJob({ running: true });
    const given = new Date(clock.now()).toISOString();

    const { jobs } = await poll(ctx)({ caller, body: { wait_seconds: 0 } });

    expect(jobs.map((job) => [job.job_id, job.attempt])).toEqual([
      [first.jobId, 1],
      [second.jobId, 1],
      [running.jobId, 1],
    ]);
    expect(readsSoFar()).toMatchObject({ jobs: 3, allocations: 1 });
    for (const { key } of [first, second]) expect((await raw.jobs.get(key))?.value.state).toBe("assigned");
    expect(ctx.starts.size).toBe(2);

    clock.advance(100);
    await ctx.starts.flush();
    for (const { key } of [first, second, running])
      expect((await raw.jobs.get(key))?.value).toMatchObject({ state: "running", started_at: given });
  });

  it("a result that comes before the held start is written writes the start and the end in one change", async () => {
    const placed = await placedJob();
    const given = new Date(clock.now()).toISOString();
    await poll(ctx)({ caller, body: { wait_seconds: 0 } });
    clock.advance(40);
    const writesBefore = jobWrites();

    const answer = await results()({
      caller,
      body: { job_id: placed.jobId, attempt: 1, outcome: "succeeded", exit_code: 0 },
    });

    expect(answer).toMatchObject({ state: "succeeded", duplicate: false });
    expect(jobWrites() - writesBefore).toBe(1);
    const after = (await raw.jobs.get(placed.key))!.value;
    expect(after).toMatchObject({
      state: "succeeded",
      started_at: given,
      finished_at: new Date(clock.now()).toISOString(),
    });
    expect(after.timeline.slice(-2).map(({ state, reason, at }) => [state, reason, at])).toEqual([
      ["running", "started", given],
      ["succeeded", "exited", after.finished_at],
    ]);
    expect(ctx.starts.size).toBe(0);
    await ctx.starts.flush();
    expect(jobWrites() - writesBefore).toBe(1);
  });

  it("a result for an attempt whose start no replica holds (the one that gave it stopped) starts and ends it at the result", async () => {
    const placed = await placedJob();
    clock.advance(40);
    const now = new Date(clock.now()).toISOString();

    await results()({ caller, body: { job_id: placed.jobId, attempt: 1, outcome: "failed", exit_code: 3 } });

    const after = (await raw.jobs.get(placed.key))!.value;
    expect(after).toMatchObject({ state: "failed", exit_code: 3, started_at: now, finished_at: now });
    expect(after.timeline.slice(-2).map(({ state, reason }) => [state, reason])).toEqual([
      ["running", "started"],
      ["failed", "exited"],
    ]);
  });

  it("a held start whose job was cancelled meanwhile writes nothing", async () => {
    const placed = await placedJob();
    await poll(ctx)({ caller, body: { wait_seconds: 0 } });
    await changeJob(ctx, placed.key, (job) => cancel(job, clock.now()));
    const cancelled = (await raw.jobs.get(placed.key))!;

    await ctx.starts.flush();

    expect(await raw.jobs.get(placed.key)).toMatchObject({
      revision: cancelled.revision,
      value: { state: "cancelled" },
    });
  });

  it("with starts written at once (CJS_START_WRITE_DELAY_MS=0), the node's event names the attempt only: its poll asks", async () => {
    const placed = await placedJob();
    const events = await listen(subjects.nodeAssigned(NODE));

    wakeNode({ nc: ctx.nc, config: { ...ctx.config, CJS_START_WRITE_DELAY_MS: 0 } }, NODE, placed.record);
    wakeNode(ctx, NODE, placed.record);

    await events.stop();
    expect(events.seen.map(({ data }) => decodeJson(data))).toEqual([
      { node_id: NODE, job_id: placed.jobId, attempt: 1 },
      { node_id: NODE, job_id: placed.jobId, attempt: 1, delivered: deliveredAttempt(placed.record) },
    ]);
  });

  it("given from its event by a gateway: the start is held from the notice and written at that time; the answer says so", async () => {
    const placed = await placedJob();
    const given = new Date(clock.now()).toISOString();

    const answer = await delivered(ctx)({ caller, body: { job_id: placed.jobId, attempt: 1 } });

    expect(answer).toEqual({ held: true });
    expect((await raw.jobs.get(placed.key))?.value.state).toBe("assigned");
    expect(ctx.starts.size).toBe(1);
    clock.advance(100);
    await ctx.starts.flush();
    expect((await raw.jobs.get(placed.key))?.value).toMatchObject({ state: "running", started_at: given });
  });

  it("given from its event, but no longer the node's (cancelled, or another attempt now): nothing held, nothing written", async () => {
    const placed = await placedJob();
    await changeJob(ctx, placed.key, (job) => cancel(job, clock.now()));
    const cancelled = (await raw.jobs.get(placed.key))!;
    const other = await placedJob();

    expect(await delivered(ctx)({ caller, body: { job_id: placed.jobId, attempt: 1 } })).toEqual({ held: false });
    expect(await delivered(ctx)({ caller, body: { job_id: other.jobId, attempt: 2 } })).toEqual({ held: false });
    expect(
      await delivered(ctx)({ caller: { ...caller, node_id: newId("nod") }, body: { job_id: other.jobId, attempt: 1 } }),
    ).toEqual({ held: false });

    expect(ctx.starts.size).toBe(0);
    expect((await raw.jobs.get(placed.key))?.revision).toBe(cancelled.revision);
    expect((await raw.jobs.get(other.key))?.value.state).toBe("assigned");
  });

  it("starts an assigned attempt this replica last wrote from its copy, without reading the job", async () => {
    const assigned = await placedJob();
    activeJobs.apply(ownRevision(assigned.key, assigned.revision, assigned.record));

    const { jobs } = await poll(ctx)({ caller, body: { wait_seconds: 0 } });

    expect(jobs.map((job) => [job.job_id, job.attempt])).toEqual([[assigned.jobId, 1]]);
    await ctx.starts.flush();
    expect(readsSoFar()).toMatchObject({ jobs: 0, allocations: 1 });
    expect((await raw.jobs.get(assigned.key))?.value.state).toBe("running");
    expect(ctx.active.latest(assigned.key)?.value.state).toBe("running");
  });
});

describe("a node's poll, as to where the node's reservations come from", () => {
  /** Runs `poll` while the replicas holding partitions are `holders`. */
  async function pollWhileHolders(holders: string[]) {
    const ownership = ctx.ownership;
    ctx.ownership = { ...ownership, holders: () => new Map(holders.map((instance) => [instance, [0]])) };
    try {
      return await poll(ctx)({ caller, body: { wait_seconds: 0 } });
    } finally {
      ctx.ownership = ownership;
    }
  }

  it("is the view's copy while this replica is the only one holding partitions: no read of the node's record", async () => {
    const assigned = await placedJob();
    const { jobs } = await pollWhileHolders([ctx.instance]);
    expect(jobs.map((job) => [job.job_id, job.attempt])).toEqual([[assigned.jobId, 1]]);
    expect(readsSoFar()).toMatchObject({ allocations: 0 });
  });

  it("is the record while another replica holds partitions too: its placement may not be in the view yet", async () => {
    const placedElsewhere = await placedJob({ viewLearns: false });
    const { jobs } = await pollWhileHolders([ctx.instance, "another-replica"]);
    expect(jobs.map((job) => [job.job_id, job.attempt])).toEqual([[placedElsewhere.jobId, 1]]);
    expect(readsSoFar()).toMatchObject({ allocations: 1 });
  });
});

describe("an idempotent submit", () => {
  const user = { app_id: APP, business_id: BUSINESS, user_id: newId("usr"), role: "member", key_id: null };
  const served = { log: pino({ level: "silent" }), trace: undefined };
  /** The scheduler's command for a submit under `jobId`; `chosenNow` when the gateway has just chosen it (the key's first claim). */
  function command(jobId: string, chosenNow: boolean) {
    return SubmitJobCommand.parse({
      caller: user,
      body: { type: "shell", command: ["true"], pool_id: "jobpath" },
      job_id: jobId,
      ...(chosenNow ? { job_id_new: true } : {}),
    });
  }

  it("under an id the gateway has just chosen: makes the job without reading for one first", async () => {
    const answer = await submitJob(ctx, new QueuedJobs())(command(newJobId(clock.now()), true), served);
    expect(answer).toMatchObject({ state: "queued" });
    expect(readsSoFar().jobs).toBe(0);
  });

  it("under a new id a racing repeat has already used: the create finds that job, and it is the answer", async () => {
    const jobId = newJobId(clock.now());
    const first = await submitJob(ctx, new QueuedJobs())(command(jobId, false), served);
    const before = readsSoFar().jobs;
    const second = await submitJob(ctx, new QueuedJobs())(command(jobId, true), served);
    expect(second).toEqual(first);
    // Only the read that follows the refused create.
    expect(readsSoFar().jobs - before).toBe(1);
  });

  it("a repeat (an id chosen earlier): reads first, and answers the job made under it without trying to make it", async () => {
    const jobId = newJobId(clock.now());
    const first = await submitJob(ctx, new QueuedJobs())(command(jobId, true), served);
    const second = await submitJob(ctx, new QueuedJobs())(command(jobId, false), served);
    expect(second).toEqual(first);
    expect(readsSoFar().jobs).toBe(1);
  });
});

describe("a submit without an id", () => {
  it("makes the job in a partition this replica watches, and its queue holds it when the submit is answered", async () => {
    const queued = new QueuedJobs();
    const watch = new JobsWatch(raw, [queued]);
    raw.jobs.onWritten = (key, revision, record, data) =>
      watch.noteWritten(key, revision, record as unknown as Record<string, unknown>, data);
    const own = new Set([7, 19]);
    await watch.follow(own);
    await watch.whenReady();
    try {
      const replica = { ...ctx, store: raw, jobsWatch: watch };
      const user = { app_id: APP, business_id: BUSINESS, user_id: newId("usr"), role: "member", key_id: null };
      const { caller, body } = SubmitJobCommand.parse({
        caller: user,
        body: { type: "shell", command: ["true"], pool_id: "jobpath" },
      });

      const answers = await Promise.all(
        Array.from({ length: 20 }, () => createJob(replica, caller, body, { log: replica.logger, trace: undefined })),
      );

      const partitions = answers.map((answer) => jobPartition(answer.job_id));
      expect(new Set(partitions)).toEqual(own);
      for (const answer of answers) expect(queued.get(jobKey(APP, BUSINESS, answer.job_id))).toBeDefined();
    } finally {
      raw.jobs.onWritten = undefined;
      await watch.stop();
    }
  });
});

describe("a submit a node can take now (decision 0094)", () => {
  const user = { app_id: APP, business_id: BUSINESS, user_id: newId("usr"), role: "member", key_id: null };
  const served = { log: pino({ level: "silent" }), trace: undefined };
  const pool = selfHostedPoolKey(BUSINESS, "jobpath");
  function command(jobId?: string) {
    return SubmitJobCommand.parse({
      caller: user,
      body: { type: "shell", command: ["true"], pool_id: "jobpath", resources: { cpu: 1, memory_mb: 256, gpu: 0 } },
      ...(jobId ? { job_id: jobId, job_id_new: true } : {}),
    });
  }
  /**
   * Runs `test` with the replica holding partitions, alone or with `others` holding some
   * too, its queue fed by its own writes.
   */
  async function asPlacingReplica(
    test: (replica: SchedulerContext, queue: QueuedJobs) => Promise<void>,
    others: string[] = [],
  ): Promise<void> {
    const queue = new QueuedJobs();
    const holders = new Map([[ctx.instance, [0]], ...others.map((other): [string, number[]] => [other, [1]])]);
    const replica: SchedulerContext = { ...ctx, ownership: { ...ctx.ownership, holders: () => holders } };
    const ownWrites = ctx.store.jobs.onWritten;
    ctx.store.jobs.onWritten = (key, revision, record, data) => {
      ownWrites?.(key, revision, record, data);
      queue.apply(ownRevision(key, revision, record, data));
    };
    try {
      await test(replica, queue);
    } finally {
      ctx.store.jobs.onWritten = ownWrites;
    }
  }
  const nodes: string[] = [];
  function addNode(slots: number): string {
    const nodeId = newId("nod");
    ctx.view.nodes.set(nodeId, { value: jobPathNode(nodeId, slots), revision: 1 });
    nodes.push(nodeId);
    return nodeId;
  }
  afterEach(async () => {
    await ctx.allocations.flushSoon();
    for (const nodeId of nodes.splice(0)) {
      ctx.view.nodes.delete(nodeId);
      ctx.view.allocations.delete(nodeId);
      await raw.allocations.delete(nodeId);
    }
  });

  it("is written assigned to the node in its one write, its room reserved and the node's poll woken; the poll then starts it", async () => {
    const nodeId = addNode(2);
    await asPlacingReplica(async (replica, queue) => {
      const events = await listen(subjects.nodeAssigned(nodeId));
      const writesBefore = jobWrites();
      const answer = await submitJob(replica, queue)(command(), served);
      expect(answer).toMatchObject({ state: "queued" });
      const key = jobKey(APP, BUSINESS, (answer as { job_id: string }).job_id);

      const stored = (await raw.jobs.get(key))!.value;
      expect(stored).toMatchObject({ state: "assigned", attempt: 1, node_id: nodeId, pending_reason: null });
      expect(stored.timeline.map(({ state, reason }) => [state, reason])).toEqual([
        ["queued", "submitted"],
        ["assigned", "assigned"],
      ]);
      expect(jobWrites() - writesBefore).toBe(1);
      expect((await raw.allocations.get(nodeId))?.value.attempts[stored.job_id]).toMatchObject({
        job_key: key,
        attempt: 1,
      });
      expect(queue.size).toBe(0);
      await events.stop();
      // The whole attempt rides on the event, for a waiting poll to be answered from it (decision 0096).
      expect(events.seen.map(({ data }) => decodeJson(data))).toEqual([
        { node_id: nodeId, job_id: stored.job_id, attempt: 1, delivered: deliveredAttempt(stored) },
      ]);

      const { jobs } = await poll(replica)({ caller: { ...caller, node_id: nodeId }, body: { wait_seconds: 0 } });
      expect(jobs.map((job) => [job.job_id, job.attempt])).toEqual([[stored.job_id, 1]]);
      await replica.starts.flush();
      expect((await raw.jobs.get(key))?.value.state).toBe("running");
    });
  });

  it("joins the queue behind a job of its pool queued here: the queue's order holds", async () => {
    const nodeId = addNode(2);
    await asPlacingReplica(async (replica, queue) => {
      const waiting = queuedJob(newJobId(clock.now()), { pool_key: pool });
      queue.apply(ownRevision(jobKey(APP, BUSINESS, waiting.job_id), 1, waiting));

      const answer = await submitJob(replica, queue)(command(), served);

      const stored = (await raw.jobs.get(jobKey(APP, BUSINESS, (answer as { job_id: string }).job_id)))!.value;
      expect(stored).toMatchObject({ state: "queued", attempt: 0, node_id: null });
      expect((await raw.allocations.get(nodeId))?.value.attempts ?? {}).toEqual({});
    });
  });

  it("is placed too while another replica places: a round, too, plans only its own replica's queue", async () => {
    const nodeId = addNode(2);
    await asPlacingReplica(
      async (replica, queue) => {
        const answer = await submitJob(replica, queue)(command(), served);

        const stored = (await raw.jobs.get(jobKey(APP, BUSINESS, (answer as { job_id: string }).job_id)))!.value;
        expect(stored).toMatchObject({ state: "assigned", node_id: nodeId });
        expect((await raw.allocations.get(nodeId))?.value.attempts[stored.job_id]).toMatchObject({ attempt: 1 });
      },
      ["another-replica"],
    );
  });

  it("joins the queue while this replica holds no partitions", async () => {
    addNode(2);
    await asPlacingReplica(async (replica, queue) => {
      const notPlacing = {
        ...replica,
        ownership: { ...replica.ownership, holders: () => new Map([["another-replica", [0]]]) },
      };
      const answer = await submitJob(notPlacing, queue)(command(), served);

      const stored = (await raw.jobs.get(jobKey(APP, BUSINESS, (answer as { job_id: string }).job_id)))!.value;
      expect(stored.state).toBe("queued");
    });
  });

  it("twenty at once onto a node with two slots: exactly two are assigned, each reserved once; the others wait in the queue", async () => {
    const nodeId = addNode(2);
    await asPlacingReplica(async (replica, queue) => {
      const answers = await Promise.all(Array.from({ length: 20 }, () => submitJob(replica, queue)(command(), served)));

      const records = await Promise.all(
        answers.map(
          async (answer) => (await raw.jobs.get(jobKey(APP, BUSINESS, (answer as { job_id: string }).job_id)))!.value,
        ),
      );
      const assigned = records.filter((record) => record.state === "assigned").map((record) => record.job_id);
      expect(assigned).toHaveLength(2);
      expect(records.filter((record) => record.state === "queued")).toHaveLength(18);
      const reserved = (await raw.allocations.get(nodeId))!.value.attempts;
      expect(Object.keys(reserved).sort()).toEqual([...assigned].sort());
      expect(queue.size).toBe(18);
    });
  });

  it("whose create is refused (a repeat made the job first): the room it reserved is freed, the first's placement kept", async () => {
    const first = addNode(4);
    await asPlacingReplica(async (replica, queue) => {
      const requested = newJobId(clock.now());
      const answer = await submitJob(replica, queue)(command(requested), served);
      const jobId = (answer as { job_id: string }).job_id;
      expect((await raw.jobs.get(jobKey(APP, BUSINESS, jobId)))?.value.node_id).toBe(first);
      // The repeat finds the most free room on a node the first did not take.
      const second = addNode(4);

      const repeat = await submitJob(replica, queue)(command(requested), served);

      expect(repeat).toEqual(answer);
      await ctx.allocations.flushSoon();
      expect((await raw.allocations.get(second))?.value.attempts[jobId]).toBeUndefined();
      expect((await raw.allocations.get(first))?.value.attempts[jobId]).toMatchObject({ attempt: 1 });
    });
  });
});
