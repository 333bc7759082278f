/**
 * The placement lease on real NATS, one server and a 3-node cluster: one replica places at
 * a time; a holder that stops gives the lease up at once; one that dies without a word
 * (its connection gone) loses it to another after the lease has passed unrenewed; and
 * replicas racing for a free lease never both hold it.
 */
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlacementLease } from "../../services/scheduler/partitions/placement-lease.js";
import { BUCKETS } from "../../shared/nats/index.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";

const LEASE_MS = 600;
const logger = pino({ level: "silent" });

describe.each(NATS_TOPOLOGIES)("the placement lease on $name", (topology) => {
  let nats: RunningNats;
  const connections: NatsConnection[] = [];
  const leases: PlacementLease[] = [];

  beforeAll(async () => {
    nats = await topology.start();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(leases.map((lease) => lease.stop().catch(() => undefined)));
    await Promise.all(connections.map((nc) => nc.close().catch(() => undefined)));
    await nats?.stop();
  });

  /** A fresh bucket per test, so one test's lease never meets the next one's. */
  async function bucket(
    name: string,
  ): Promise<{ open: () => Promise<KV>; openWithConnection: () => Promise<{ kv: KV; nc: NatsConnection }> }> {
    const admin = await connect({ servers: nats.url.split(",") });
    connections.push(admin);
    await new Kvm(admin).create(`${BUCKETS.leases}_${name}`, { history: 1, replicas: nats.replicas });
    const openWithConnection = async () => {
      const nc = await connect({ servers: nats.url.split(",") });
      connections.push(nc);
      return { kv: await new Kvm(nc).open(`${BUCKETS.leases}_${name}`), nc };
    };
    return { openWithConnection, open: async () => (await openWithConnection()).kv };
  }

  function lease(kv: KV, instance: string): { lease: PlacementLease; changes: boolean[] } {
    const changes: boolean[] = [];
    const made = new PlacementLease(kv, instance, LEASE_MS, logger, (leading) => changes.push(leading));
    leases.push(made);
    return { lease: made, changes };
  }

  it("of replicas racing for a free lease, exactly one holds it", async () => {
    const kvs = await bucket("race");
    const racers = await Promise.all(
      Array.from({ length: 5 }, async (_, index) => lease(await kvs.open(), `r${index}`)),
    );
    racers.forEach(({ lease: each }) => each.start());
    await expect
      .poll(() => racers.filter(({ lease: each }) => each.leading).length, { timeout: 10_000, interval: 20 })
      .toBe(1);
    // Several renewals later, still one, and the same one.
    const holder = racers.find(({ lease: each }) => each.leading);
    for (let tick = 0; tick < 5; tick += 1) await Promise.all(racers.map(({ lease: each }) => each.tick()));
    expect(racers.filter(({ lease: each }) => each.leading)).toEqual([holder]);
  });

  it("a holder that stops hands over at once; one that dies silently is replaced once its lease passed", async () => {
    const kvs = await bucket("handover");
    const first = lease(await kvs.open(), "first");
    first.lease.start();
    await expect.poll(() => first.lease.leading, { timeout: 10_000, interval: 20 }).toBe(true);
    const secondSide = await kvs.openWithConnection();
    const second = lease(secondSide.kv, "second");
    second.lease.start();
    await second.lease.tick();
    expect(second.lease.leading).toBe(false);

    await first.lease.stop();
    expect(first.changes).toEqual([true, false]);
    await expect.poll(() => second.lease.leading, { timeout: 10_000, interval: 20 }).toBe(true);

    // The second holder's connection dies without a goodbye: it can renew no more.
    const third = lease(await kvs.open(), "third");
    third.lease.start();
    await third.lease.tick();
    expect(third.lease.leading).toBe(false);
    await secondSide.nc.close();
    await expect.poll(() => third.lease.leading, { timeout: 10_000, interval: 20 }).toBe(true);
    await expect.poll(() => second.lease.leading, { timeout: 10_000, interval: 20 }).toBe(false);
  });
});
