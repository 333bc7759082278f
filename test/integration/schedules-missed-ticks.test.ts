/**
 * Late and missed ticks, with the scheduler's clock moved by hand: a tick up to a minute
 * late is still made, each its own job; ticks missed for longer (no replica fired for
 * hours) make one job, of the latest of them, and the schedule goes on from now.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LATE_TICK_LIMIT_MS } from "../../services/scheduler/schedules/fire-schedules.js";
import { tickJobId } from "../../services/scheduler/schedules/schedule-ids.js";
import { untagged } from "../harness/job-ids.js";
import type { ComputeClient } from "../harness/client.js";
import { ManualClock } from "../harness/manual-clock.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

const HOUR_MS = 3_600_000;
const WAIT = { timeout: 20_000, interval: 100 };

let nats: NatsHarness;
let system: RunningSystem;
let user: ComputeClient;
// On a whole hour, so the ticks below are easy to name.
const clock = new ManualClock(Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 5 * 60_000);

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 1, registries: 1 },
    { CJS_SCHEDULE_CHECK_INTERVAL_MS: "100" },
    { schedulerClock: clock },
  );
  const tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

async function jobIdsOf(scheduleId: string): Promise<string[]> {
  const { items } = await user.call("listJobs", { limit: 200 });
  return items
    .filter((job) => job.schedule_id === scheduleId)
    .map((job) => untagged(job.job_id))
    .sort();
}

describe("schedules: late and missed ticks", () => {
  it("ticks less than the limit late each make their job; ticks missed for hours make one, of the latest, then it goes on from now", async () => {
    const { schedule } = await user.call("createSchedule", {
      cron: "0 * * * *",
      overlap: "queue",
      job: { type: "shell", command: ["true"], pool_id: "missed-idle" },
    });
    const firstTick = Date.parse(schedule.next_run_at!);
    expect(firstTick).toBe(clock.now() - 5 * 60_000 + HOUR_MS);

    // Five hours and ten minutes on: ticks at +1 h … +5 h were missed; only +5 h makes a job.
    clock.advance(5 * HOUR_MS + 5 * 60_000);
    const latest = firstTick + 4 * HOUR_MS;
    await expect
      .poll(() => jobIdsOf(schedule.schedule_id), WAIT)
      .toEqual([untagged(tickJobId(schedule.schedule_id, latest))]);
    const after = (await user.call("retrieveSchedule", { schedule_id: schedule.schedule_id })).schedule;
    expect(untagged(after.last_job_id!)).toBe(untagged(tickJobId(schedule.schedule_id, latest)));
    expect(after).toMatchObject({
      last_run_at: new Date(latest).toISOString(),
      next_run_at: new Date(latest + HOUR_MS).toISOString(),
    });

    // The next tick, seen late but within the limit: made as usual.
    clock.advance(HOUR_MS - 10 * 60_000 + LATE_TICK_LIMIT_MS / 2);
    await expect
      .poll(() => jobIdsOf(schedule.schedule_id), WAIT)
      .toEqual([latest, latest + HOUR_MS].map((tick) => untagged(tickJobId(schedule.schedule_id, tick))));
  });

  it("several ticks within the limit are each made, in order", async () => {
    const { schedule } = await user.call("createSchedule", {
      cron: "*/10 * * * * *",
      overlap: "queue",
      job: { type: "shell", command: ["true"], pool_id: "missed-idle" },
    });
    const first = Date.parse(schedule.next_run_at!);
    clock.advance(first - clock.now() + 25_000);
    const ticks = [first, first + 10_000, first + 20_000];
    await expect
      .poll(() => jobIdsOf(schedule.schedule_id), WAIT)
      .toEqual(ticks.map((tick) => untagged(tickJobId(schedule.schedule_id, tick))));
    expect((await user.call("retrieveSchedule", { schedule_id: schedule.schedule_id })).schedule.next_run_at).toBe(
      new Date(first + 30_000).toISOString(),
    );
  });
});
