/**
 * Exactly one job per tick across scheduler replicas and restarts: two scheduler
 * processes, a schedule ticking every second, and the replica that fires (the placement
 * lease holder) SIGKILLed mid-way; then a replica started afresh joins and the one that
 * fires is killed again. Each time another takes over and fires the ticks it finds due,
 * the ones the dead replica may have made already included: each tick's job id is derived
 * from the tick, so every tick of the window has exactly one job, none doubled and none
 * lost (a takeover is well within the late-tick limit, past which missed ticks are
 * collapsed into one).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tickJobId, timeOfJobId } from "../../services/scheduler/schedules/schedule-ids.js";
import type { ComputeClient } from "../harness/client.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { healthUrlOf, serviceProcessEnv, untilReadyz } from "../harness/readiness.js";
import { startServiceProcess, type ServiceProcess } from "../harness/service-process.js";
import { createTenant, signedInClient, startGateway, type RunningGateway } from "../harness/system.js";

const LEADING = "this replica places jobs now (it holds the placement lease)";
const NOT_LEADING = "this replica no longer places jobs";
const TICK_MS = 1000;
const WAIT = { timeout: 60_000, interval: 100 };

let nats: NatsHarness;
let schedulerEnv: Record<string, string>;
let gateway: RunningGateway;
let user: ComputeClient;
const schedulers: ServiceProcess[] = [];

/** Whether each process holds the placement lease, as its last log line about it says. */
const leading = new Map<ServiceProcess, boolean>();

/** Follows the process's log lines about the lease for the rest of the test. */
function followLease(child: ServiceProcess): void {
  const noted = (line: Record<string, unknown>): boolean => {
    if (line.msg === LEADING || line.msg === NOT_LEADING) leading.set(child, line.msg === LEADING);
    return false;
  };
  // Never matches: it ends when the process exits or the test is long over.
  child.waitForLog(noted, 600_000).catch(() => undefined);
}

/** Starts a scheduler process and waits until it is ready. */
async function startScheduler(): Promise<ServiceProcess> {
  const child = startServiceProcess({ service: "scheduler", env: schedulerEnv });
  schedulers.push(child);
  followLease(child);
  await untilReadyz(child, await healthUrlOf(child, 60_000), 200, 60_000);
  return child;
}

/** SIGKILLs the replica that holds the lease (the one that fires) once one does; resolves when another has taken it over. */
async function killTheLeader(): Promise<void> {
  await expect.poll(() => schedulers.filter((child) => child.alive() && leading.get(child)).length, WAIT).toBe(1);
  const leader = schedulers.find((child) => child.alive() && leading.get(child))!;
  const others = schedulers.filter((child) => child !== leader && child.alive());
  const takeover = Promise.race(others.map((child) => child.waitForLog((line) => line.msg === LEADING, 60_000)));
  await leader.kill();
  expect(await leader.exited).toEqual({ code: null, signal: "SIGKILL" });
  await takeover;
}

beforeAll(async () => {
  nats = await startNats();
  schedulerEnv = {
    ...serviceProcessEnv("scheduler", nats.url, 1),
    CJS_PLACEMENT_LEASE_MS: "1000",
    CJS_RECONCILE_INTERVAL_MS: "200",
    CJS_SCHEDULE_MIN_INTERVAL_SECONDS: "1",
    CJS_SCHEDULE_CHECK_INTERVAL_MS: "100",
  };
  await Promise.all([startScheduler(), startScheduler()]);
  gateway = await startGateway(nats.url);
  const tenant = await createTenant(gateway.nc);
  ({ client: user } = await signedInClient(gateway.baseUrl, tenant));
}, 120_000);

afterAll(async () => {
  await Promise.all(schedulers.map((child) => child.kill()));
  await gateway?.stop();
  await nats?.stop();
});

async function jobIdsOf(scheduleId: string): Promise<string[]> {
  const { items } = await user.call("listJobs", { limit: 200 });
  return items.filter((job) => job.schedule_id === scheduleId).map((job) => job.job_id);
}

describe("schedules: exactly one job per tick", () => {
  it("the firing replica SIGKILLed mid-way, twice, with a restarted replica between: every tick of the window has exactly one job", async () => {
    const { schedule } = await user.call("createSchedule", {
      cron: "* * * * * *",
      overlap: "queue",
      job: { type: "shell", command: ["true"], pool_id: "exactly-once-idle" },
    });
    await expect.poll(async () => (await jobIdsOf(schedule.schedule_id)).length, WAIT).toBeGreaterThanOrEqual(4);

    const killedAt = Date.now();
    await killTheLeader();
    const tookOverAt = Date.now();
    // Ticks after the takeover, made by the survivor alone.
    await expect
      .poll(
        async () => (await jobIdsOf(schedule.schedule_id)).filter((id) => timeOfJobId(id) > tookOverAt).length,
        WAIT,
      )
      .toBeGreaterThanOrEqual(3);

    // A replica started afresh (a restart) joins; the one that fires is killed again.
    await startScheduler();
    await killTheLeader();
    const restartedTookOverAt = Date.now();
    await expect
      .poll(
        async () => (await jobIdsOf(schedule.schedule_id)).filter((id) => timeOfJobId(id) > restartedTookOverAt).length,
        WAIT,
      )
      .toBeGreaterThanOrEqual(3);
    await user.call("pauseSchedule", { schedule_id: schedule.schedule_id });

    const ids = await jobIdsOf(schedule.schedule_id);
    const ticks = ids.map(timeOfJobId).sort((a, b) => a - b);
    // Each job is named after its tick: a second made for one tick would be the same job.
    for (const id of ids) expect(id).toBe(tickJobId(schedule.schedule_id, timeOfJobId(id)));
    expect(new Set(ticks).size).toBe(ticks.length);
    // Every tick from the first to the last has its job, those around the kill included.
    const gaps = ticks.slice(1).map((tick, index) => tick - ticks[index]!);
    expect(
      gaps.every((gap) => gap === TICK_MS),
      `ticks ${ticks.map((tick) => new Date(tick).toISOString()).join(", ")}`,
    ).toBe(true);
    expect(ticks[0]!).toBeLessThan(killedAt);
    expect(ticks[ticks.length - 1]!).toBeGreaterThan(restartedTookOverAt);
  }, 180_000);
});
