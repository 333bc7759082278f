/**
 * `JsonBucket` against a real nats-server. `mutate` and `upsert` starting from an entry
 * the caller holds: the first write is a compare-and-set on the held revision with no
 * read, and a held copy that is no longer current loses that write and the change runs
 * again on a fresh read (the KV handle counts its reads). `removeIf` and `erase`: what
 * they leave in the bucket's stream.
 */
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { AppError } from "../../shared/errors/index.js";
import { JsonBucket, RecordBusyError } from "../../shared/nats/index.js";
import { countingKv } from "../harness/counting-kv.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";

const Counter = z.looseObject({ count: z.number().int() });
type Counter = z.infer<typeof Counter>;

let nats: NatsHarness;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

/** A bucket of counters whose KV handle counts its reads. */
async function countingBucket(
  name: string,
): Promise<{ records: JsonBucket<typeof Counter>; reads: () => number; kv: KV }> {
  const kv = await new Kvm(nc).create(name, { history: 1 });
  const counted = countingKv(kv);
  return { records: new JsonBucket(counted.kv, Counter), reads: counted.reads, kv };
}

const increment = (current: Counter): Counter => ({ ...current, count: current.count + 1 });

describe("mutate from a held entry", () => {
  it("at the current revision: one compare-and-set, no read", async () => {
    const { records, reads } = await countingBucket("held_current");
    const revision = await records.create("a", { count: 1 });

    const stored = await records.mutate("a", increment, { value: { count: 1 }, revision });

    expect(reads()).toBe(0);
    expect(stored?.value.count).toBe(2);
    expect(await records.get("a")).toEqual({ value: { count: 2 }, revision: stored?.revision });
  });

  it("behind the record: the write is refused, the record read, and the change applied to what it holds now", async () => {
    const { records, reads } = await countingBucket("held_stale");
    const first = await records.create("a", { count: 1 });
    await records.update("a", { count: 10 }, first);
    const seen: number[] = [];

    const stored = await records.mutate(
      "a",
      (current) => {
        seen.push(current.count);
        return increment(current);
      },
      { value: { count: 1 }, revision: first },
    );

    expect(seen).toEqual([1, 10]);
    expect(reads()).toBe(1);
    expect((await records.get("a"))?.value.count).toBe(11);
    expect(stored?.value.count).toBe(11);
  });

  it("nothing to change on the held entry: it comes back as it is, nothing read or written", async () => {
    const { records, reads } = await countingBucket("held_unchanged");
    const revision = await records.create("a", { count: 1 });

    const stored = await records.mutate("a", () => undefined, { value: { count: 1 }, revision });

    expect(reads()).toBe(0);
    expect(stored).toMatchObject({ value: { count: 1 }, revision });
    expect((await records.get("a"))?.revision).toBe(revision);
  });

  it("a key deleted since it was held: the refused write reads it and answers null", async () => {
    const { records } = await countingBucket("held_deleted");
    const revision = await records.create("a", { count: 1 });
    await records.delete("a");

    expect(await records.mutate("a", increment, { value: { count: 1 }, revision })).toBeNull();
    expect(await records.get("a")).toBeNull();
  });

  it("an async change that another writer overtakes runs again on the fresh record", async () => {
    const { records } = await countingBucket("held_async");
    const revision = await records.create("a", { count: 1 });
    let calls = 0;

    const stored = await records.mutate(
      "a",
      async (current) => {
        calls += 1;
        // Another writer lands while the first call is still working.
        if (calls === 1) await records.mutate("a", (other) => ({ ...other, count: other.count + 100 }));
        return increment(current);
      },
      { value: { count: 1 }, revision },
    );

    expect(calls).toBe(2);
    expect(stored?.value.count).toBe(102);
    expect((await records.get("a"))?.value.count).toBe(102);
  });

  it("fields the schema does not name are kept through the change", async () => {
    const { records, kv } = await countingBucket("held_unknown");
    const revision = await kv.create("a", JSON.stringify({ count: 1, added_by_a_newer_replica: "kept" }));
    const held = await records.get("a");
    expect(held?.revision).toBe(revision);

    await records.mutate("a", increment, held!);

    expect(JSON.parse((await kv.get("a"))!.string())).toEqual({ count: 2, added_by_a_newer_replica: "kept" });
  });
});

describe("upsert from a held entry", () => {
  it("at the current revision: one compare-and-set, no read, reported as written", async () => {
    const { records, reads } = await countingBucket("upsert_current");
    const revision = await records.create("a", { count: 1 });

    const stored = await records.upsert("a", (current) => ({ count: (current?.count ?? 0) + 1 }), {
      value: { count: 1 },
      revision,
    });

    expect(reads()).toBe(0);
    expect(stored).toMatchObject({ value: { count: 2 }, written: true });
  });

  it("nothing to change on the held entry: not written, nothing read", async () => {
    const { records, reads } = await countingBucket("upsert_unchanged");
    const revision = await records.create("a", { count: 1 });

    const stored = await records.upsert("a", () => undefined, { value: { count: 1 }, revision });

    expect(reads()).toBe(0);
    expect(stored).toEqual({ value: { count: 1 }, revision, written: false });
  });
});

describe("a record too busy to change", () => {
  it("gives up with RecordBusyError after `writes` lost writes, pausing before each new try, and writes nothing of its own", async () => {
    const { records } = await countingBucket("busy");
    await records.create("a", { count: 0 });
    const pausesAsked: number[] = [];
    let calls = 0;

    const attempt = records.mutate(
      "a",
      async (current) => {
        calls += 1;
        // Another writer lands between every read and write.
        await records.mutate("a", (other) => ({ ...other, count: other.count + 100 }));
        return increment(current);
      },
      undefined,
      { writes: 3, pauseMs: (write) => (pausesAsked.push(write), 1) },
    );

    await expect(attempt).rejects.toBeInstanceOf(RecordBusyError);
    await expect(attempt).rejects.toMatchObject({ code: "service.unavailable", retryAfterSeconds: 1 });
    expect(calls).toBe(3);
    expect(pausesAsked).toEqual([1, 2]);
    expect((await records.get("a"))?.value.count).toBe(300);
  });
});

/** A bucket of counters whose stream lets messages carry their own lifetime (as `cjs_jobs`). */
async function expiringMarkersBucket(
  name: string,
): Promise<{ records: JsonBucket<typeof Counter>; kv: KV; messages: () => Promise<number> }> {
  const kv = await new Kvm(nc).create(name, { history: 1 });
  const jsm = await jetstreamManager(nc);
  const { config } = await jsm.streams.info(`KV_${name}`);
  await jsm.streams.update(config.name, { ...config, allow_msg_ttl: true });
  return {
    records: new JsonBucket(kv, Counter),
    kv,
    messages: async () => (await jsm.streams.info(`KV_${name}`)).state.messages,
  };
}

const refuseOdd = (current: Counter): boolean => {
  if (current.count % 2 === 1) throw new AppError("state.conflict", "odd");
  return true;
};

describe("removeIf and erase", () => {
  it("removeIf removes a record the check lets go; a watch sees the marker, which the server then removes", async () => {
    const { records, kv, messages } = await expiringMarkersBucket("remove_allowed");
    await records.create("a", { count: 2 });
    const watch = (await kv.watch({ key: "a" }))[Symbol.asyncIterator]();
    // The record's value first: a watch that had not started by the removal would begin at the marker.
    expect((await watch.next()).value?.operation).toBe("PUT");
    expect((await records.removeIf("a", refuseOdd, { markerTtlSeconds: 1 }))?.value).toEqual({ count: 2 });
    expect((await watch.next()).value?.operation).toBe("PURGE");
    await watch.return?.();
    expect(await records.get("a")).toBeNull();
    await vi.waitFor(async () => expect(await messages()).toBe(0), { timeout: 10_000, interval: 100 });
  });

  it("removeIf keeps a record the check refuses, and checks afresh a held copy that is behind", async () => {
    const { records } = await expiringMarkersBucket("remove_refused");
    const revision = await records.create("a", { count: 2 });
    await records.put("a", { count: 3 });
    await expect(
      records.removeIf("a", refuseOdd, { markerTtlSeconds: 60, known: { value: { count: 2 }, revision } }),
    ).rejects.toMatchObject({ code: "state.conflict" });
    expect((await records.get("a"))?.value).toEqual({ count: 3 });
    expect(await records.removeIf("missing", refuseOdd, { markerTtlSeconds: 60 })).toBeNull();
  });

  it("without a marker lifetime, removeIf deletes (a DEL marker) what `allow` lets go and keeps what it does not", async () => {
    const { records, kv } = await countingBucket("remove_delete");
    await records.create("kept", { count: 1 });
    await records.create("gone", { count: 2 });

    expect(await records.removeIf("kept", (current) => current.count % 2 === 0)).toBeNull();
    expect((await records.removeIf("gone", (current) => current.count % 2 === 0))?.value).toEqual({ count: 2 });

    expect((await records.get("kept"))?.value).toEqual({ count: 1 });
    expect((await kv.get("gone"))?.operation).toBe("DEL");
  });

  it("erase leaves nothing of the key in the stream", async () => {
    const { records, messages } = await expiringMarkersBucket("erase_all");
    await records.create("a", { count: 1 });
    await records.create("b", { count: 1 });
    await records.erase("a");
    expect(await records.get("a")).toBeNull();
    expect(await records.keys()).toEqual(["b"]);
    expect(await messages()).toBe(1);
  });
});
