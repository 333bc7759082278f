/**
 * Compare-and-set must be linearizable: when many writers race read → update on one key,
 * every update the server confirms is one increment, and no other write lands. With
 * nats-server 2.9.10 on an R3 cluster this failed (10,041 confirmed updates, final counter
 * 5,507), so it runs on a three-node cluster with R3 buckets and on a single server.
 */
import { jetstreamManager, JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { isAppError } from "../../shared/errors/index.js";
import { JsonBucket } from "../../shared/nats/index.js";
import { startNatsCluster } from "../harness/nats-cluster.js";
import { startNats } from "../harness/nats-server.js";

/** Separate connections racing, spread over the cluster's nodes. */
const CLIENTS = 6;
/** Read → update rounds per client on the raw KV API: bounded, not timed. */
const ROUNDS_PER_CLIENT = 300;
/** `JsonBucket.mutate` calls per client (each may take several rounds). */
const MUTATES_PER_CLIENT = 100;
const KEY = "counter";

interface Topology {
  name: string;
  start: () => Promise<{ urls: readonly string[]; replicas: number; stop(): Promise<void> }>;
}

const TOPOLOGIES: Topology[] = [
  {
    name: "three-node cluster, R3",
    start: async () => {
      const cluster = await startNatsCluster();
      return { urls: cluster.urls, replicas: cluster.replicas, stop: () => cluster.stop() };
    },
  },
  {
    name: "single server, R1",
    start: async () => {
      const nats = await startNats();
      return { urls: [nats.url], replicas: 1, stop: () => nats.stop() };
    },
  },
];

const Counter = z.looseObject({ count: z.number().int() });

/** The server refused the update because the key moved on; a clustered stream may answer either code. */
function isWrongSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** The key's last value and its stream sequence, read from the stream leader (a direct get may be served by a lagging replica). */
async function leaderRead(nc: NatsConnection, bucket: string): Promise<{ text: string; seq: number }> {
  const jsm = await jetstreamManager(nc);
  const message = await jsm.streams.getMessage(`KV_${bucket}`, { last_by_subj: `$KV.${bucket}.${KEY}` });
  if (!message) throw new Error(`no ${KEY} in ${bucket}`);
  return { text: message.string(), seq: message.seq };
}

describe.each(TOPOLOGIES)("compare-and-set on a $name", ({ start }) => {
  let topology: Awaited<ReturnType<Topology["start"]>>;
  const clients: NatsConnection[] = [];

  beforeAll(async () => {
    topology = await start();
    for (let index = 0; index < CLIENTS; index += 1) {
      // Each client on its own node: the race crosses servers, not just connections.
      clients.push(await connect({ servers: topology.urls[index % topology.urls.length], ignoreClusterUpdates: true }));
    }
  });

  afterAll(async () => {
    await Promise.all(clients.map((nc) => nc.close()));
    await topology?.stop();
  });

  async function openBuckets(bucket: string): Promise<KV[]> {
    const created = await new Kvm(clients[0]!).create(bucket, { history: 1, replicas: topology.replicas });
    // A stream created a moment ago on a cluster may answer "no responders" until its subjects are known on every server: the first write waits for that.
    await vi.waitFor(
      async () => {
        if ((await created.get(KEY).catch(() => null))?.operation === "PUT") return;
        await created.create(KEY, JSON.stringify({ count: 0 }));
      },
      { timeout: 15_000, interval: 100 },
    );
    return Promise.all(clients.map((nc) => new Kvm(nc).open(bucket)));
  }

  it("racing read → update: the final counter equals the updates the server confirmed, and each confirmed update is one write", async () => {
    const bucket = "cas_raw";
    const buckets = await openBuckets(bucket);
    const before = await leaderRead(clients[0]!, bucket);
    let confirmed = 0;
    let conflicts = 0;

    await Promise.all(
      buckets.map(async (kv) => {
        for (let round = 0; round < ROUNDS_PER_CLIENT; round += 1) {
          const entry = await kv.get(KEY);
          if (!entry) throw new Error(`${KEY} vanished`);
          const { count } = Counter.parse(entry.json());
          try {
            await kv.update(KEY, JSON.stringify({ count: count + 1 }), entry.revision);
            confirmed += 1;
          } catch (error) {
            if (!isWrongSequence(error)) throw error;
            conflicts += 1;
          }
        }
      }),
    );

    const after = await leaderRead(clients[0]!, bucket);
    expect(conflicts, "the writers did not race").toBeGreaterThan(0);
    expect(confirmed + conflicts).toBe(CLIENTS * ROUNDS_PER_CLIENT);
    expect(Counter.parse(JSON.parse(after.text)).count).toBe(confirmed);
    expect(after.seq - before.seq).toBe(confirmed);
  }, 60_000);

  it("racing JsonBucket.mutate: the final counter equals the mutates that returned a new revision", async () => {
    const bucket = "cas_mutate";
    const buckets = (await openBuckets(bucket)).map((kv) => new JsonBucket(kv, Counter));
    const before = await leaderRead(clients[0]!, bucket);
    let applied = 0;
    let gaveUp = 0;

    await Promise.all(
      buckets.map(async (records) => {
        for (let call = 0; call < MUTATES_PER_CLIENT; call += 1) {
          try {
            const result = await records.mutate(KEY, (current) => ({ ...current, count: current.count + 1 }));
            if (!result) throw new Error(`${KEY} vanished`);
            applied += 1;
          } catch (error) {
            // Too many conflicts in a row: mutate gives up without writing, which is allowed.
            if (!(isAppError(error) && error.code === "service.unavailable")) throw error;
            gaveUp += 1;
          }
        }
      }),
    );

    const after = await leaderRead(clients[0]!, bucket);
    expect(applied + gaveUp).toBe(CLIENTS * MUTATES_PER_CLIENT);
    expect(applied).toBeGreaterThan(0);
    expect(Counter.parse(JSON.parse(after.text)).count).toBe(applied);
    expect(after.seq - before.seq).toBe(applied);
  }, 60_000);
});
