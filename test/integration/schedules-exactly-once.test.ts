/**
 * Exactly one job per tick across scheduler replicas and restarts: two scheduler
 * processes, a schedule ticking every second, and the replica that fires it (the owner of
 * the schedule's job partition) SIGKILLed mid-way; then a replica started afresh joins and
 * the one that fires is killed again. Each time another takes over and fires the ticks it finds due,
 * the ones the dead replica may have made already included: each tick's job id is derived
 * from the tick, so every tick of the window has exactly one job, none doubled and none
 * lost (a takeover is well within the late-tick limit, past which missed ticks are
 * collapsed into one).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tickJobId, timeOfJobId } from "../../services/scheduler/schedules/schedule-ids.js";
import { schedulePartitionOfKey, scheduleKey } from "../../services/scheduler/schedules/schedule-record.js";
import { untagged } from "../harness/job-ids.js";
import type { ComputeClient } from "../harness/client.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { healthUrlOf, serviceProcessEnv, untilReadyz } from "../harness/readiness.js";
import { startServiceProcess, type ServiceProcess } from "../harness/service-process.js";
import { createTenant, signedInClient, startGateway, type RunningGateway } from "../harness/system.js";

const PARTITIONS_CHANGED = "this replica's job partitions changed";
const TICK_MS = 1000;
const WAIT = { timeout: 60_000, interval: 100 };

let nats: NatsHarness;
let schedulerEnv: Record<string, string>;
let gateway: RunningGateway;
let user: ComputeClient;
const schedulers: ServiceProcess[] = [];

/** The job partitions each process owns, as its log lines about them say. */
const owned = new Map<ServiceProcess, Set<number>>();

/** Follows the process's log lines about its partitions for the rest of the test. */
function followPartitions(child: ServiceProcess): void {
  owned.set(child, new Set());
  const noted = (line: Record<string, unknown>): boolean => {
    if (line.msg !== PARTITIONS_CHANGED) return false;
    const mine = owned.get(child)!;
    for (const partition of (line.gained as number[]) ?? []) mine.add(partition);
    for (const partition of (line.lost as number[]) ?? []) mine.delete(partition);
    return false;
  };
  // Never matches: it ends when the process exits or the test is long over.
  child.waitForLog(noted, 600_000).catch(() => undefined);
}

/** Starts a scheduler process and waits until it is ready. */
async function startScheduler(): Promise<ServiceProcess> {
  const child = startServiceProcess({ service: "scheduler", env: schedulerEnv });
  schedulers.push(child);
  followPartitions(child);
  await untilReadyz(child, await healthUrlOf(child, 60_000), 200, 60_000);
  return child;
}

/** SIGKILLs the replica that owns `partition` (the one that fires its schedules); resolves when another has taken it over. */
async function killTheFirer(partition: number): Promise<void> {
  const owners = () => schedulers.filter((child) => child.alive() && owned.get(child)?.has(partition));
  await expect.poll(() => owners().length, WAIT).toBe(1);
  const firer = owners()[0]!;
  const others = schedulers.filter((child) => child !== firer && child.alive());
  const takeover = Promise.race(
    others.map((child) =>
      child.waitForLog(
        (line) => line.msg === PARTITIONS_CHANGED && ((line.gained as number[]) ?? []).includes(partition),
        60_000,
      ),
    ),
  );
  await firer.kill();
  expect(await firer.exited).toEqual({ code: null, signal: "SIGKILL" });
  await takeover;
}

beforeAll(async () => {
  nats = await startNats();
  schedulerEnv = {
    ...serviceProcessEnv("scheduler", nats.url, 1),
    CJS_PARTITION_LEASE_MS: "1000",
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

/** Waits on `polled`; a wait that fails says what the live replicas last logged (who held which partition, and why not). */
async function withReplicaLogs(polled: Promise<void>): Promise<void> {
  try {
    await polled;
  } catch (error) {
    const logs = schedulers
      .filter((child) => child.alive())
      .map((child) => `--- ${child.name}\n${child.output()}`)
      .join("\n");
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs}`, { cause: error });
  }
}

describe("schedules: exactly one job per tick", () => {
  it("the firing replica SIGKILLed mid-way, twice, with a restarted replica between: every tick of the window has exactly one job", async () => {
    const { schedule } = await user.call("createSchedule", {
      cron: "* * * * * *",
      overlap: "queue",
      job: { type: "shell", command: ["true"], pool_id: "exactly-once-idle" },
    });
    await expect.poll(async () => (await jobIdsOf(schedule.schedule_id)).length, WAIT).toBeGreaterThanOrEqual(4);

    const partition = schedulePartitionOfKey(scheduleKey(schedule.app_id, schedule.business_id, schedule.schedule_id));
    const killedAt = Date.now();
    await killTheFirer(partition);
    const tookOverAt = Date.now();
    // Ticks after the takeover, made by the survivor alone.
    await withReplicaLogs(
      expect
        .poll(
          async () => (await jobIdsOf(schedule.schedule_id)).filter((id) => timeOfJobId(id) > tookOverAt).length,
          WAIT,
        )
        .toBeGreaterThanOrEqual(3),
    );

    // A replica started afresh (a restart) joins; the one that fires is killed again.
    await startScheduler();
    await killTheFirer(partition);
    const restartedTookOverAt = Date.now();
    await withReplicaLogs(
      expect
        .poll(
          async () =>
            (await jobIdsOf(schedule.schedule_id)).filter((id) => timeOfJobId(id) > restartedTookOverAt).length,
          WAIT,
        )
        .toBeGreaterThanOrEqual(3),
    );
    await user.call("pauseSchedule", { schedule_id: schedule.schedule_id });

    // The list may be refused (503, Retry-After) while the killed replica's partitions are handed on: asked again.
    let ids: string[] = [];
    await expect
      .poll(async () => {
        ids = await jobIdsOf(schedule.schedule_id);
        return true;
      }, WAIT)
      .toBe(true);
    const ticks = ids.map(timeOfJobId).sort((a, b) => a - b);
    // Each job is named after its tick: a second made for one tick would be the same job.
    for (const id of ids) expect(untagged(id)).toBe(untagged(tickJobId(schedule.schedule_id, timeOfJobId(id))));
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
