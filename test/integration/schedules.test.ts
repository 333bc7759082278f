/**
 * Schedules on the real stack: the operations, their validation and tenancy, and the jobs
 * the ticks make (normal jobs carrying their `schedule_id`), with pause, resume and the
 * overlap policies. Ticks are every 2 s here (the minimum interval is set to 2 s); every
 * wait is on a condition of the stored state.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tickJobId, timeOfJobId } from "../../services/scheduler/schedules/schedule-ids.js";
import { untagged } from "../harness/job-ids.js";
import type { ComputeClient } from "../harness/client.js";
import { errorCodeOf, failureOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";
import type { RpcRequest, Schedule } from "../../shared/contract/index.js";

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;
let other: ComputeClient;
let baseUrl: string;

const EVERY_2_S = "*/2 * * * * *";
/** A pool no node serves: the jobs made there stay queued. */
const IDLE_POOL = "schedules-idle";
const WAIT = { timeout: 20_000, interval: 100 };

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 1, registries: 1 },
    { CJS_SCHEDULE_MIN_INTERVAL_SECONDS: "2", CJS_SCHEDULE_CHECK_INTERVAL_MS: "100" },
  );
  baseUrl = system.gateways[0]!.baseUrl;
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(baseUrl, tenant));
  ({ client: other } = await signedInClient(
    baseUrl,
    await createTenant(system.gateways[0]!.nc, { appId: tenant.app.app_id }),
  ));
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

function create(overrides: Partial<RpcRequest<"createSchedule">> = {}, pool = IDLE_POOL) {
  return user.call("createSchedule", {
    cron: "0 3 * * *",
    job: { type: "shell", command: ["echo", "tick"], pool_id: pool },
    ...overrides,
  });
}

async function retrieve(scheduleId: string): Promise<Schedule> {
  return (await user.call("retrieveSchedule", { schedule_id: scheduleId })).schedule;
}

/** The jobs of the business that the schedule made, oldest first. */
async function jobsOf(scheduleId: string) {
  const { items } = await user.call("listJobs", { limit: 200 });
  return items.filter((job) => job.schedule_id === scheduleId).reverse();
}

/** Waits until the schedule has made `count` jobs; answers them, oldest first. */
async function madeJobs(scheduleId: string, count: number) {
  await expect.poll(async () => (await jobsOf(scheduleId)).length, WAIT).toBeGreaterThanOrEqual(count);
  return jobsOf(scheduleId);
}

describe("schedules: the operations", () => {
  it("create answers the schedule with its defaults and first tick; retrieve answers the same", async () => {
    const before = Date.now();
    const { schedule } = await create({ name: "nightly" });
    expect(schedule).toMatchObject({
      schedule_id: expect.stringMatching(/^sch_/),
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      user_id: tenant.user.user_id,
      name: "nightly",
      cron: "0 3 * * *",
      timezone: "UTC",
      overlap: "skip",
      state: "active",
      last_run_at: null,
      last_job_id: null,
      last_error: null,
      skipped_count: 0,
    });
    expect(schedule.job).toMatchObject({
      type: "shell",
      command: ["echo", "tick"],
      pool_id: IDLE_POOL,
      priority: 0,
      max_attempts: 3,
    });
    const next = Date.parse(schedule.next_run_at!);
    expect(next).toBeGreaterThan(before);
    expect(new Date(next).getUTCHours()).toBe(3);
    expect(await retrieve(schedule.schedule_id)).toEqual(schedule);
  });

  it("reads the expression in the schedule's time zone", async () => {
    const { schedule } = await create({ cron: "30 9 * * *", timezone: "Asia/Kolkata" });
    // 09:30 in Kolkata (UTC+5:30) is 04:00 UTC.
    expect(schedule.next_run_at).toMatch(/T04:00:00\.000Z$/);
  });

  it("lists the business's schedules newest first, a page at a time", async () => {
    const made = [];
    for (let index = 0; index < 3; index += 1)
      made.push((await create({ name: `page-${index}` })).schedule.schedule_id);
    const first = await user.call("listSchedules", { limit: 2 });
    const ids = first.items.map((schedule) => schedule.schedule_id);
    expect(ids).toEqual([made[2], made[1]]);
    expect(first.next_cursor).toBe(made[1]);
    const second = await user.call("listSchedules", { limit: 2, cursor: first.next_cursor! });
    expect(second.items[0]!.schedule_id).toBe(made[0]);
  });

  it("delete removes the schedule; retrieve and a second delete answer 404", async () => {
    const { schedule } = await create();
    expect(await user.call("deleteSchedule", { schedule_id: schedule.schedule_id })).toEqual({
      schedule_id: schedule.schedule_id,
      deleted: true,
    });
    expect(await errorCodeOf(user.call("retrieveSchedule", { schedule_id: schedule.schedule_id }))).toBe(
      "resource.not_found",
    );
    expect(await errorCodeOf(user.call("deleteSchedule", { schedule_id: schedule.schedule_id }))).toBe(
      "resource.not_found",
    );
    expect((await user.call("listSchedules", {})).items.map((item) => item.schedule_id)).not.toContain(
      schedule.schedule_id,
    );
  });
});

describe("schedules: validation", () => {
  it.each([
    { case: "a malformed expression", body: { cron: "every day" }, path: "cron" },
    { case: "a field out of range", body: { cron: "61 * * * *" }, path: "cron" },
    { case: "an expression that never fires", body: { cron: "0 0 31 2 *" }, path: "cron" },
    { case: "ticks closer than the minimum interval", body: { cron: "* * * * * *" }, path: "cron" },
    { case: "an unknown time zone", body: { timezone: "Mars/Olympus" }, path: "timezone" },
  ])("$case is 400 request.invalid naming $path", async ({ body, path }) => {
    const failure = await failureOf(create(body));
    expect(failure.code).toBe("request.invalid");
    expect(JSON.stringify(failure.details)).toContain(`"path":"${path}"`);
  });

  it("a template's timeout above the service's maximum is 400 request.invalid naming job.timeout_seconds", async () => {
    const failure = await failureOf(
      create({ job: { type: "shell", command: ["true"], timeout_seconds: 30 * 86_400 } }),
    );
    expect(failure.code).toBe("request.invalid");
    expect(JSON.stringify(failure.details)).toContain('"path":"job.timeout_seconds"');
  });

  it("a job template that is no valid submit is 400 request.invalid", async () => {
    expect(
      await errorCodeOf(user.call("createSchedule", { cron: "0 3 * * *", job: { type: "shell", command: [] } })),
    ).toBe("request.invalid");
    const withRunAt = {
      cron: "0 3 * * *",
      job: { type: "shell", command: ["true"], run_at: new Date().toISOString() },
    } as unknown as RpcRequest<"createSchedule">;
    expect(await errorCodeOf(user.call("createSchedule", withRunAt))).toBe("request.invalid");
  });

  it("a schedule id or cursor not of the schedule format is 400 request.invalid", async () => {
    expect(await errorCodeOf(user.call("retrieveSchedule", { schedule_id: "job_00000000000000000000" }))).toBe(
      "request.invalid",
    );
    expect(await errorCodeOf(user.call("listSchedules", { cursor: "not-a-cursor" }))).toBe("request.invalid");
  });
});

describe("schedules: API keys", () => {
  it("a key needs schedules:write to create and schedules:read to list; its allowedJobTypes apply to the template", async () => {
    const reader = await user.call("createApiKey", { name: "schedules reader", scopes: ["schedules:read"] });
    const readerClient = user.with({ apiKey: reader.key });
    expect(
      await errorCodeOf(
        readerClient.call("createSchedule", { cron: "0 3 * * *", job: { type: "shell", command: ["true"] } }),
      ),
    ).toBe("auth.scope_missing");
    expect(await readerClient.call("listSchedules", {})).toMatchObject({ items: expect.any(Array) });

    const limited = await user.call("createApiKey", { name: "schedules shell only", allowedJobTypes: ["shell"] });
    const limitedClient = user.with({ apiKey: limited.key });
    expect(
      await errorCodeOf(
        limitedClient.call("createSchedule", { cron: "0 3 * * *", job: { type: "gpu-train", command: ["true"] } }),
      ),
    ).toBe("quota.job_type_not_allowed");
    const { schedule } = await limitedClient.call("createSchedule", {
      cron: "0 3 * * *",
      job: { type: "shell", command: ["true"] },
    });
    expect(schedule.user_id).toBe(tenant.user.user_id);
  });

  it("a schedule makes jobs, so creating or resuming one with a key also needs jobs:write; pausing does not", async () => {
    const scheduler = await user.call("createApiKey", {
      name: "schedules only",
      scopes: ["schedules:read", "schedules:write"],
    });
    const schedulerClient = user.with({ apiKey: scheduler.key });
    const refused = await failureOf(
      schedulerClient.call("createSchedule", {
        cron: "0 3 * * *",
        job: { type: "shell", command: ["true"] },
        name: "no-jobs-write",
      }),
    );
    expect(refused).toMatchObject({ status: 403, code: "auth.scope_missing", details: { scope: "jobs:write" } });
    expect((await user.call("listSchedules", {})).items.map((listed) => listed.name)).not.toContain("no-jobs-write");

    const { schedule } = await user.call("createSchedule", {
      cron: "0 3 * * *",
      job: { type: "shell", command: ["true"] },
      paused: true,
    });
    expect(await errorCodeOf(schedulerClient.call("resumeSchedule", { schedule_id: schedule.schedule_id }))).toBe(
      "auth.scope_missing",
    );
    expect((await user.call("retrieveSchedule", { schedule_id: schedule.schedule_id })).schedule.state).toBe("paused");
    await user.call("resumeSchedule", { schedule_id: schedule.schedule_id });
    expect((await schedulerClient.call("pauseSchedule", { schedule_id: schedule.schedule_id })).schedule.state).toBe(
      "paused",
    );

    const both = await user.call("createApiKey", {
      name: "schedules and jobs",
      scopes: ["schedules:write", "jobs:write"],
    });
    expect(
      (await user.with({ apiKey: both.key }).call("resumeSchedule", { schedule_id: schedule.schedule_id })).schedule
        .state,
    ).toBe("active");
  });
});

describe("schedules: tenancy", () => {
  it("another business of the app gets 404 for each operation on the schedule and changes nothing", async () => {
    const { schedule } = await create();
    const ref = { schedule_id: schedule.schedule_id };
    for (const operation of ["retrieveSchedule", "pauseSchedule", "resumeSchedule", "deleteSchedule"] as const) {
      expect(await errorCodeOf(other.call(operation, ref)), operation).toBe("resource.not_found");
    }
    expect((await other.call("listSchedules", {})).items.map((item) => item.schedule_id)).not.toContain(
      schedule.schedule_id,
    );
    expect(await retrieve(schedule.schedule_id)).toEqual(schedule);
  });
});

describe("schedules: the jobs of ticks", () => {
  it("each tick makes a normal job of the template, carrying the schedule's id, under the id of its tick", async () => {
    const { schedule } = await create({
      cron: EVERY_2_S,
      overlap: "queue",
      job: { type: "shell", command: ["echo", "tick"], pool_id: IDLE_POOL, metadata: { from: "schedule" } },
    });
    const [first, second] = await madeJobs(schedule.schedule_id, 2);
    await user.call("pauseSchedule", { schedule_id: schedule.schedule_id });
    for (const job of [first!, second!]) {
      expect(job).toMatchObject({
        schedule_id: schedule.schedule_id,
        user_id: tenant.user.user_id,
        key_id: null,
        state: "queued",
        command: ["echo", "tick"],
        metadata: { from: "schedule" },
        // The queue policy: each job waits for the previous one to end.
        concurrency: { key: `schedule:${schedule.schedule_id}`, max_running: 1 },
      });
      // Named after a tick of the expression: an even second.
      const tick = timeOfJobId(job.job_id);
      expect(tick % 2000).toBe(0);
      expect(untagged(job.job_id)).toBe(untagged(tickJobId(schedule.schedule_id, tick)));
    }
    const full = (await user.call("retrieveJob", { job_id: second!.job_id })).job;
    expect(full.timeline[0]).toMatchObject({ state: "queued", reason: "submitted" });
    const recorded = await retrieve(schedule.schedule_id);
    expect((await jobsOf(schedule.schedule_id)).map((job) => job.job_id)).toContain(recorded.last_job_id);
    expect(untagged(tickJobId(schedule.schedule_id, Date.parse(recorded.last_run_at!)))).toBe(
      untagged(recorded.last_job_id!),
    );
  });

  it("a paused schedule makes no job until resumed, then goes on from the next tick", async () => {
    const { schedule: paused } = await create({ cron: EVERY_2_S, overlap: "queue", paused: true });
    expect(paused).toMatchObject({ state: "paused", next_run_at: null });
    // A schedule running beside it shows ticks passing.
    const { schedule: witness } = await create({ cron: EVERY_2_S, overlap: "queue" });
    await madeJobs(witness.schedule_id, 2);
    await user.call("deleteSchedule", { schedule_id: witness.schedule_id });
    expect(await jobsOf(paused.schedule_id)).toEqual([]);

    const resumedAt = Date.now();
    const { schedule: resumed } = await user.call("resumeSchedule", { schedule_id: paused.schedule_id });
    expect(resumed.state).toBe("active");
    expect(Date.parse(resumed.next_run_at!)).toBeGreaterThan(resumedAt - 1000);
    const [job] = await madeJobs(paused.schedule_id, 1);
    expect(Date.parse(job!.created_at)).toBeGreaterThanOrEqual(Date.parse(resumed.next_run_at!));

    const { schedule: pausedAgain } = await user.call("pauseSchedule", { schedule_id: paused.schedule_id });
    expect(pausedAgain).toMatchObject({ state: "paused", next_run_at: null });
    // Pausing a paused schedule changes nothing.
    expect((await user.call("pauseSchedule", { schedule_id: paused.schedule_id })).schedule).toEqual(pausedAgain);
  });

  it("skip: while the previous job has not ended, ticks make none; once it ends the next tick makes one", async () => {
    const pool = "schedules-skip";
    const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: pool });
    const { schedule } = await create({ cron: EVERY_2_S, overlap: "skip" }, pool);
    const [first] = await madeJobs(schedule.schedule_id, 1);
    await expect.poll(async () => (await node.poll(), node.running.has(first!.job_id)), WAIT).toBe(true);
    await expect.poll(async () => (await retrieve(schedule.schedule_id)).skipped_count, WAIT).toBeGreaterThanOrEqual(2);
    const skipping = await retrieve(schedule.schedule_id);
    expect(skipping.last_job_id).toBe(first!.job_id);
    expect(skipping.last_skipped_at).not.toBeNull();
    expect(await jobsOf(schedule.schedule_id)).toHaveLength(1);

    await node.finish(first!.job_id);
    const [, second] = await madeJobs(schedule.schedule_id, 2);
    await user.call("deleteSchedule", { schedule_id: schedule.schedule_id });
    expect((await user.call("retrieveJob", { job_id: first!.job_id })).job.state).toBe("succeeded");
    expect(second!.schedule_id).toBe(schedule.schedule_id);
  });

  it("queue: ticks keep making jobs, which wait their turn (concurrency_limit) and run one at a time", async () => {
    const pool = "schedules-queue";
    const node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: pool });
    const { schedule } = await create({ cron: EVERY_2_S, overlap: "queue" }, pool);
    const [first] = await madeJobs(schedule.schedule_id, 1);
    await expect.poll(async () => (await node.poll(), node.running.has(first!.job_id)), WAIT).toBe(true);
    const [, second] = await madeJobs(schedule.schedule_id, 2);
    // The node has room, but the schedule's key allows one running job: the second waits for the first.
    await expect
      .poll(async () => (await user.call("retrieveJob", { job_id: second!.job_id })).job.pending_reason, WAIT)
      .toBe("concurrency_limit");
    await node.poll();
    expect(node.running.has(second!.job_id)).toBe(false);

    await node.finish(first!.job_id);
    await expect.poll(async () => (await node.poll(), node.running.has(second!.job_id)), WAIT).toBe(true);
    await user.call("deleteSchedule", { schedule_id: schedule.schedule_id });
    expect((await user.call("retrieveJob", { job_id: second!.job_id })).job.concurrency).toEqual({
      key: `schedule:${schedule.schedule_id}`,
      max_running: 1,
    });
  });

  it("a tick whose job is refused records why on the schedule, makes nothing, and is not tried again", async () => {
    // More cores than any plan allows on an operator pool: billing refuses every tick's job.
    const { schedule } = await create({
      cron: EVERY_2_S,
      job: { type: "shell", command: ["true"], pool_id: "default", resources: { cpu: 1000, memory_mb: 512, gpu: 0 } },
    });
    await expect
      .poll(async () => (await retrieve(schedule.schedule_id)).last_error?.code, WAIT)
      .toBe("plan.limit_exceeded");
    const refused = await retrieve(schedule.schedule_id);
    await user.call("deleteSchedule", { schedule_id: schedule.schedule_id });
    expect(refused).toMatchObject({ last_job_id: null, last_run_at: null });
    // The refused tick was passed: the next one is later than the first.
    expect(Date.parse(refused.next_run_at!)).toBeGreaterThan(Date.parse(schedule.next_run_at!));
    expect(await jobsOf(schedule.schedule_id)).toEqual([]);
  });

  it("cancel_previous: a tick cancels the previous job that has not ended, then makes its own", async () => {
    const { schedule } = await create({ cron: EVERY_2_S, overlap: "cancel_previous" });
    const [first] = await madeJobs(schedule.schedule_id, 2);
    await user.call("deleteSchedule", { schedule_id: schedule.schedule_id });
    // The second job was made after the first was cancelled.
    const firstNow = (await user.call("retrieveJob", { job_id: first!.job_id })).job;
    expect(firstNow).toMatchObject({
      state: "cancelled",
      timeline: expect.arrayContaining([expect.objectContaining({ state: "cancelled" })]),
    });
    const jobs = await jobsOf(schedule.schedule_id);
    expect(jobs.filter((job) => job.state === "queued").length).toBeLessThanOrEqual(1);
    expect(jobs.slice(0, -1).every((job) => job.state === "cancelled")).toBe(true);
  });
});
