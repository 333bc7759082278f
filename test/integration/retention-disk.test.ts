import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { BUCKETS, kvStreams, OBJECT_STORES, STREAMS } from "../../shared/nats/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { finishJobsWithData } from "../harness/job-data.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startScheduler,
  startSystem,
  type RunningService,
  type RunningSystem,
} from "../harness/system.js";

/**
 * Bounded disk: with a retention of one second, jobs that finish with log lines and an
 * artifact round after round leave the JetStream store no bigger than before them. After
 * each round the job bucket (records, then the markers of deleted ones, which expire),
 * the log stream, the object store and the artifact index come back to empty, whatever
 * the number of jobs run so far.
 */
const ROUNDS = 12;
const ROUND_JOBS = 25;
const POOL = "soak";
const STORE_STREAMS = [
  kvStreams.name(BUCKETS.jobs),
  STREAMS.logs,
  `OBJ_${OBJECT_STORES.artifacts}`,
  kvStreams.name(BUCKETS.artifactIndex),
];

let nats: NatsHarness;
let system: RunningSystem;
let user: ComputeClient;
let node: FakeNode;
let lateScheduler: RunningService | undefined;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 1, registries: 1 },
    {
      CJS_RETENTION_SECONDS_OVERRIDE: "1",
      CJS_RETENTION_SWEEP_INTERVAL_MS: "250",
      CJS_RETENTION_MARKER_TTL_SECONDS: "1",
    },
  );
  const gateway = system.gateways[0]!;
  const tenant = await createTenant(gateway.nc);
  ({ client: user } = await signedInClient(gateway.baseUrl, tenant));
  node = await FakeNode.register(user, gateway.baseUrl, tenant.app.app_id, {
    pool_id: POOL,
    capacity: { cpu: 64, memory_mb: 262_144, gpu: 0, slots: ROUND_JOBS },
  });
});

afterAll(async () => {
  await lateScheduler?.stop();
  await system?.stop();
  await nats?.stop();
});

/** Messages and bytes of each stream that holds job data. */
async function storeUse(): Promise<Record<string, { messages: number; bytes: number }>> {
  const jsm = await jetstreamManager(system.gateways[0]!.nc);
  const use: Record<string, { messages: number; bytes: number }> = {};
  for (const stream of STORE_STREAMS) {
    const { state } = await jsm.streams.info(stream);
    use[stream] = { messages: state.messages, bytes: state.bytes };
  }
  return use;
}

const EMPTY = Object.fromEntries(STORE_STREAMS.map((stream) => [stream, { messages: 0, bytes: 0 }]));

async function deletedByRetention(kind: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("cjs_retention_deleted_total")!.get();
  return metric.values
    .filter((value) => value.labels.kind === kind && value.labels.reason === "retention")
    .reduce((sum, value) => sum + value.value, 0);
}

describe("bounded disk under retention", () => {
  it(`the store comes back to empty after each of ${ROUNDS} rounds of ${ROUND_JOBS} jobs with logs and an artifact`, async () => {
    const before = {
      jobs: await deletedByRetention("job"),
      artifacts: await deletedByRetention("artifact"),
      logs: await deletedByRetention("log_message"),
    };
    for (let round = 1; round <= ROUNDS; round += 1) {
      await finishJobsWithData(user, node, POOL, ROUND_JOBS);
      await vi.waitFor(async () => expect(await storeUse()).toEqual(EMPTY), { timeout: 30_000, interval: 100 });
    }
    // Every job stored a log batch and an artifact, and the sweep is what removed them.
    expect((await deletedByRetention("job")) - before.jobs).toBe(ROUNDS * ROUND_JOBS);
    expect((await deletedByRetention("artifact")) - before.artifacts).toBe(ROUNDS * ROUND_JOBS);
    expect((await deletedByRetention("log_message")) - before.logs).toBe(ROUNDS * ROUND_JOBS);
  }, 120_000);

  it("a scheduler started once the last deleted job's marker has expired starts and answers lists", async () => {
    // The bucket's last sequence is now a marker the server removed: no watch will ever deliver it.
    await vi.waitFor(async () => expect(await storeUse()).toEqual(EMPTY), { timeout: 30_000, interval: 100 });
    await system.schedulers[0]!.stop();
    lateScheduler = await startScheduler(nats.url, { CJS_RETENTION_SECONDS_OVERRIDE: "1" });
    expect(await user.call("listJobs", {})).toEqual({ items: [], next_cursor: null });
  });
});
