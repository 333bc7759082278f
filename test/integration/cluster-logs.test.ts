import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import type { LogLine } from "../../shared/contract/index.js";
import { decodeJson, STREAMS, subjects } from "../../shared/nats/index.js";
import { LogMessage } from "../../shared/records/index.js";
import { logLines, runningJobWithLogs } from "../harness/log-jobs.js";
import { errorCodeOf } from "../harness/error-code.js";
import { startNatsCluster, type NatsClusterHarness } from "../harness/nats-cluster.js";
import {
  createTenant,
  signedInClient,
  startLogRelay,
  startSystem,
  type RunningService,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

let cluster: NatsClusterHarness;
let system: RunningSystem;
let secondRelay: RunningService;
let tenant: Tenant;
let user: ComputeClient;
let baseUrl: string;

beforeAll(async () => {
  cluster = await startNatsCluster();
  const env = { CJS_NATS_REPLICAS: String(cluster.replicas) };
  system = await startSystem(cluster.url, { gateways: 1, schedulers: 1, registries: 1 }, env);
  // A second log relay, connected through another node of the cluster.
  secondRelay = await startLogRelay(cluster.urls[2]!, env);
  baseUrl = system.gateways[0]!.baseUrl;
  tenant = await createTenant(system.gateways[0]!.nc);
  user = (await signedInClient(baseUrl, tenant)).client;
}, 120_000);

afterAll(async () => {
  await secondRelay?.stop();
  await system?.stop();
  await cluster?.stop();
});

const lines = logLines;

async function runningJob(pool: string) {
  const { jobId, push } = await runningJobWithLogs(user, baseUrl, tenant.app.app_id, pool);
  return { jobId, push: (batch: LogLine[]) => push(1, batch) };
}

/** Every line stored for the job's first attempt, read through an ordered consumer (served by the stream's leader). */
async function storedLines(jobId: string): Promise<LogLine[]> {
  const consumer = await jetstream(system.gateways[0]!.nc).consumers.get(STREAMS.logs, {
    filter_subjects: [subjects.jobLogs(jobId, 1)],
  });
  const stored: LogLine[] = [];
  if ((await consumer.info()).num_pending === 0) return stored;
  const messages = await consumer.consume();
  try {
    for await (const message of messages) {
      stored.push(...LogMessage.parse(decodeJson(message.data)).lines);
      if (message.info.pending === 0) break;
    }
  } finally {
    await messages.close();
    await consumer.delete();
  }
  return stored;
}

describe("log batches on an R3 stream", () => {
  it("each sent twice at once, through two log relays on different servers, are stored once each, in order", async () => {
    const { jobId, push } = await runningJob("cluster-logs-twice");
    let accepted = 0;
    let duplicates = 0;
    for (let from = 1; from <= 60; from += 6) {
      const batch = lines(from, from + 5);
      for (const answer of await Promise.all([push(batch), push(batch), push(batch)])) {
        accepted += answer.accepted;
        duplicates += answer.duplicates;
      }
    }
    expect({ accepted, duplicates }).toEqual({ accepted: 60, duplicates: 120 });
    expect((await storedLines(jobId)).map((line) => line.line)).toEqual(lines(1, 60).map((line) => line.line));
  });

  it("a push the stream refuses part-way stores its first lines only, and its resend the rest, once", async () => {
    const { jobId, push } = await runningJob("cluster-logs-refused");
    // Stored as lines 1-4 (80 KB), then 5-6 and 7-8 (131 KB each): the stream refuses the second message.
    const batch = lines(1, 8, (seq) => String(seq % 10).repeat(seq <= 4 ? 20_000 : 65_536));
    const jsm = await jetstreamManager(system.gateways[0]!.nc);
    const { config } = await jsm.streams.info(STREAMS.logs);
    await jsm.streams.update(STREAMS.logs, { ...config, max_msg_size: 100_000 });
    try {
      expect(await errorCodeOf(push(batch))).toBe("internal.error");
    } finally {
      await jsm.streams.update(STREAMS.logs, { ...config, max_msg_size: config.max_msg_size });
    }
    expect((await storedLines(jobId)).map((line) => line.seq)).toEqual([1, 2, 3, 4]);
    expect(await push(batch)).toEqual({ accepted: 4, duplicates: 4, dropped: 0 });
    expect((await storedLines(jobId)).map((line) => line.line)).toEqual(batch.map((line) => line.line));
  });
});
