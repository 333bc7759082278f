/**
 * The scheduler's partition ownership on real NATS, one server and a 3-node cluster:
 * replicas starting together split the job partitions so that each is owned by exactly
 * one; a replica that joins takes its share; one that stops hands its partitions on at
 * once; one that dies without a word (its connection gone) stops working its partitions
 * and loses them to the others once its lease has passed unrenewed.
 */
import { Kvm, type KV, type KvEntry, KvWatchInclude } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PartitionOwnership } from "../../services/scheduler/partitions/partition-ownership.js";
import { BUCKETS } from "../../shared/nats/index.js";
import { JOB_PARTITIONS } from "../../shared/records/index.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";

const LEASE_MS = 600;
const logger = pino({ level: "silent" });

describe.each(NATS_TOPOLOGIES)("partition ownership on $name", (topology) => {
  let nats: RunningNats;
  const connections: NatsConnection[] = [];
  const replicas: PartitionOwnership[] = [];

  beforeAll(async () => {
    nats = await topology.start();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop().catch(() => undefined)));
    await Promise.all(connections.map((nc) => nc.close().catch(() => undefined)));
    await nats?.stop();
  });

  /** A fresh bucket per test, so one test's replicas never meet the next one's. */
  async function bucket(name: string): Promise<() => Promise<{ kv: KV; nc: NatsConnection }>> {
    const admin = await connect({ servers: nats.url.split(",") });
    connections.push(admin);
    await new Kvm(admin).create(`${BUCKETS.leases}_${name}`, { history: 1, replicas: nats.replicas });
    return async () => {
      const nc = await connect({ servers: nats.url.split(",") });
      connections.push(nc);
      return { kv: await new Kvm(nc).open(`${BUCKETS.leases}_${name}`), nc };
    };
  }

  async function replica(open: () => Promise<{ kv: KV; nc: NatsConnection }>, instance: string) {
    const { kv, nc } = await open();
    const made = new PartitionOwnership(
      kv,
      instance,
      LEASE_MS,
      logger,
      () => undefined,
      () => ({ queued: 0 }),
    );
    replicas.push(made);
    await made.start();
    return { ownership: made, nc };
  }

  /** Whether the replicas together own every partition, each exactly once. */
  function splitExactly(members: readonly PartitionOwnership[]): boolean {
    const counts = new Array<number>(JOB_PARTITIONS).fill(0);
    for (const member of members) for (const partition of member.owned) counts[partition]! += 1;
    return counts.every((count) => count === 1);
  }

  it("splits the partitions among replicas that start together, each owned by exactly one", async () => {
    const open = await bucket("split");
    const members = await Promise.all(["a", "b", "c"].map(async (name) => (await replica(open, name)).ownership));
    await expect
      .poll(() => splitExactly(members) && members.every((member) => member.owned.size > 0), {
        timeout: 10_000,
        interval: 20,
      })
      .toBe(true);
    expect(members[0]!.unowned()).toEqual([]);
  });

  it("gives a joining replica its share; one that stops hands its partitions on at once", async () => {
    const open = await bucket("join");
    const first = (await replica(open, "first")).ownership;
    await expect.poll(() => first.owned.size, { timeout: 10_000, interval: 20 }).toBe(JOB_PARTITIONS);
    const second = (await replica(open, "second")).ownership;
    await expect
      .poll(() => splitExactly([first, second]) && second.owned.size > 0, { timeout: 10_000, interval: 20 })
      .toBe(true);

    await first.stop();
    expect(first.owned.size).toBe(0);
    await expect.poll(() => second.owned.size, { timeout: 10_000, interval: 20 }).toBe(JOB_PARTITIONS);
  });

  it("takes the partitions of a replica that died silently once its lease passed; the dead one stops working them", async () => {
    const open = await bucket("death");
    const survivor = (await replica(open, "survivor")).ownership;
    const doomed = await replica(open, "doomed");
    await expect
      .poll(() => splitExactly([survivor, doomed.ownership]) && doomed.ownership.owned.size > 0, {
        timeout: 10_000,
        interval: 20,
      })
      .toBe(true);
    const lost = [...doomed.ownership.owned];
    expect(lost.length).toBeGreaterThan(0);

    // Its connection dies without a goodbye: it can renew no more.
    await doomed.nc.close();
    await expect.poll(() => survivor.owned.size, { timeout: 10_000, interval: 20 }).toBe(JOB_PARTITIONS);
    await expect.poll(() => doomed.ownership.owned.size, { timeout: 10_000, interval: 20 }).toBe(0);
  });

  it("shares the partitions with a replica whose watch fell silent (its consumer gone with a NATS node), lease after lease", async () => {
    const open = await bucket("deaf");
    const hearing = (await replica(open, "hearing")).ownership;
    await expect.poll(() => hearing.owned.size, { timeout: 10_000, interval: 20 }).toBe(JOB_PARTITIONS);
    const { kv } = await open();
    // Counts the deaf replica's renewals: the test's clock is theirs, not a timer.
    const renewals = { deaf: 0 };
    const counter = await kv.watch({ key: "scheduler.members.deaf", include: KvWatchInclude.UpdatesOnly });
    void (async () => {
      for await (const entry of counter) if (entry.operation === "PUT") renewals.deaf += 1;
    })();
    const silent = new ScriptedWatch();
    const deafKv = new Proxy(kv, {
      get(target, name, receiver) {
        if (name === "watch") return async () => silent;
        return Reflect.get(target, name, receiver) as unknown;
      },
    });
    const deaf = new PartitionOwnership(
      deafKv,
      "deaf",
      LEASE_MS,
      logger,
      () => undefined,
      () => ({ queued: 0 }),
    );
    replicas.push(deaf);
    await deaf.start();
    const shared = () => splitExactly([hearing, deaf]) && hearing.owned.size > 0 && deaf.owned.size > 0;
    await expect.poll(shared, { timeout: 10_000, interval: 20 }).toBe(true);
    // Five leases on (25 renewals of its own), the deaf replica has neither taken the hearing one's partitions nor lost its own.
    const from = renewals.deaf;
    await expect.poll(() => renewals.deaf - from, { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(25);
    counter.stop();
    expect(shared()).toBe(true);
  });

  it("a claim released while a replica starts stays released in its picture, however late the start's read of it answers", async () => {
    const open = await bucket("late-read");
    const { kv } = await open();
    const claim = "scheduler.partitions.0";
    // A live replica that held partition 0.
    await kv.put(
      "scheduler.members.holder",
      JSON.stringify({ instance: "holder", renewed_at: new Date().toISOString() }),
    );
    await kv.put(claim, JSON.stringify({ instance: "holder" }));
    const watch = new ScriptedWatch();
    // The start lists the claim; while its read of it is under way the holder lets it go, and the watch brings the
    // deletion first; then the read answers with the claim as it was (a cluster's follower answering behind).
    const lagging = new Proxy(kv, {
      get(target, name, receiver) {
        if (name === "watch") return async () => watch;
        if (name === "get")
          return async (key: string) => {
            if (key !== claim) return target.get(key);
            const asItWas = await target.get(key);
            await target.delete(key);
            const deletion = await target.get(key);
            await watch.deliver({
              key,
              revision: deletion!.revision,
              operation: "DEL",
              value: new Uint8Array(),
            } as unknown as KvEntry);
            return asItWas;
          };
        return Reflect.get(target, name, receiver) as unknown;
      },
    });
    const ownership = new PartitionOwnership(
      lagging,
      "starting",
      60_000,
      logger,
      () => undefined,
      () => ({ queued: 0 }),
    );
    replicas.push(ownership);
    await ownership.start();
    // Held by nobody, or claimed by the starting replica: never by the live replica that let it go.
    expect(ownership.ownerOf(0)).not.toBe("holder");
    expect(ownership.holders().get("holder") ?? []).toEqual([]);
  });
});

/** A KV watch whose entries the test hands over: `deliver` resolves once the watcher has taken the entry in. */
class ScriptedWatch implements AsyncIterable<KvEntry> {
  #pending: Array<{ entry: KvEntry; taken: () => void }> = [];
  #waiting: ((result: IteratorResult<KvEntry>) => void) | undefined;
  #afterTaken: (() => void) | undefined;
  #stopped = false;

  deliver(entry: KvEntry): Promise<void> {
    return new Promise((taken) => {
      this.#pending.push({ entry, taken });
      this.#hand();
    });
  }

  stop(): void {
    this.#stopped = true;
    this.#waiting?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<KvEntry> {
    return {
      next: () => {
        // The watcher asks for the next entry: the one before it has been taken in.
        this.#afterTaken?.();
        this.#afterTaken = undefined;
        if (this.#stopped) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.#waiting = resolve;
          this.#hand();
        });
      },
    };
  }

  #hand(): void {
    const next = this.#pending.shift();
    if (!next) return;
    if (!this.#waiting) {
      this.#pending.unshift(next);
      return;
    }
    const resolve = this.#waiting;
    this.#waiting = undefined;
    this.#afterTaken = next.taken;
    resolve({ value: next.entry, done: false });
  }
}
