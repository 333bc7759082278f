/**
 * The rate limiter counts a user's next batch from the record it last wrote (one
 * compare-and-set, no read) while the user's requests come to one replica, and still
 * counts exactly when two replicas share a user: a copy another replica moved past loses
 * its compare-and-set and is read again, on one nats-server and on a 3-node cluster. A
 * busy user's requests are taken from leases counted ahead: the counter then holds the
 * requests and what the replica leased and has not used, never fewer.
 */
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimiter } from "../../services/gateway/rate-limit/rate-limiter.js";
import { RateLimitRecord } from "../../services/gateway/rate-limit/windows.js";
import { isAppError } from "../../shared/errors/index.js";
import { BUCKETS, ensureBuckets, JsonBucket, kvKey } from "../../shared/nats/index.js";
import { newId, systemClock } from "../../shared/runtime/index.js";
import { countingKv } from "../harness/counting-kv.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";

const logger = pino({ level: "silent" });
const POLICY = { second: 1000, minute: 20, hour: 1000 };
/** Room for leases of many tokens. */
const ROOMY = { second: 10_000, minute: 100_000, hour: 1_000_000 };
const noHeaders = { header: () => undefined };

describe.each(NATS_TOPOLOGIES)("rate-limit counters on $name", (topology) => {
  let nats: RunningNats;
  let nc: NatsConnection;
  let counter: JsonBucket<typeof RateLimitRecord>;
  /** Two replicas' limiters on the same bucket, each counting its own reads. */
  const replicas: Array<{ limiter: RateLimiter; reads: () => number; writes: () => number }> = [];
  let roomy: { limiter: RateLimiter; writes: () => number };
  /** A second replica with room for leases, beside `roomy`. */
  let roomyPeer: RateLimiter;

  beforeAll(async () => {
    nats = await topology.start();
    nc = await connect({ servers: nats.url.split(",") });
    await ensureBuckets(nc, [BUCKETS.rateLimits], { replicas: nats.replicas, logger });
    const kv = await new Kvm(nc).open(BUCKETS.rateLimits);
    counter = new JsonBucket(kv, RateLimitRecord);
    for (let index = 0; index < 2; index += 1) {
      const counted = countingKv(await new Kvm(nc).open(BUCKETS.rateLimits));
      const bucket = new JsonBucket(counted.kv, RateLimitRecord);
      replicas.push({
        limiter: new RateLimiter({ bucket, clock: systemClock, logger, policy: POLICY }),
        reads: counted.reads,
        writes: counted.writes,
      });
    }
    const counted = countingKv(await new Kvm(nc).open(BUCKETS.rateLimits));
    roomy = {
      limiter: new RateLimiter({
        bucket: new JsonBucket(counted.kv, RateLimitRecord),
        clock: systemClock,
        logger,
        policy: ROOMY,
      }),
      writes: counted.writes,
    };
    roomyPeer = new RateLimiter({
      bucket: new JsonBucket(await new Kvm(nc).open(BUCKETS.rateLimits), RateLimitRecord),
      clock: systemClock,
      logger,
      policy: ROOMY,
    });
  }, 120_000);

  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  /** Admits one request of `user` on `replica`: true, or false when refused `rate.limited`. */
  async function admitted(replica: number, user: string): Promise<boolean> {
    try {
      await replicas[replica]!.limiter.admitUser("app_copies", user, noHeaders);
      return true;
    } catch (error) {
      if (isAppError(error) && error.code === "rate.limited") return false;
      throw error;
    }
  }

  /** The user's minute count in the shared counter, less what `limiter` counted ahead and has not used. */
  async function countedFor(limiter: RateLimiter, user: string): Promise<number | undefined> {
    const stored = await counter.get(kvKey("app_copies", user));
    return stored ? stored.value.minute.count - limiter.countedAhead("app_copies", user) : undefined;
  }

  it("counts a user's requests on one replica from its own copy: the first reads, the next ones only write", async () => {
    const user = newId("usr");
    const before = replicas[0]!.reads();
    for (let index = 0; index < 10; index += 1) expect(await admitted(0, user)).toBe(true);
    expect(replicas[0]!.reads() - before).toBe(1);
    // A lease taken meanwhile (its write may still be on its way) counts what the replica holds ahead.
    await expect.poll(() => countedFor(replicas[0]!.limiter, user)).toBe(10);
  });

  it("takes a busy user's requests from leases: far fewer writes than requests, and every request counted", async () => {
    const user = newId("usr");
    const before = roomy.writes();
    // One after another: without leases each would be a batch of one, a write each.
    for (let index = 0; index < 300; index += 1) await roomy.limiter.admitUser("app_copies", user, noHeaders);
    expect(roomy.writes() - before).toBeLessThan(60);
    await expect.poll(() => countedFor(roomy.limiter, user)).toBe(300);
  });

  it("counts every one of 400 requests at once over two replicas taking leases: the counter holds them and what each holds ahead", async () => {
    const user = newId("usr");
    const limiters = [roomy.limiter, roomyPeer];
    await Promise.all(
      Array.from({ length: 400 }, (_, index) => limiters[index % 2]!.admitUser("app_copies", user, noHeaders)),
    );
    const counted = async () => {
      const stored = await counter.get(kvKey("app_copies", user));
      const ahead = limiters.reduce((sum, limiter) => sum + limiter.countedAhead("app_copies", user), 0);
      return stored ? stored.value.minute.count - ahead : undefined;
    };
    await expect.poll(counted).toBe(400);
  });

  it("counts exactly when two replicas take turns with one user: 20 of 30 admitted, the rest refused", async () => {
    const user = newId("usr");
    const answers: boolean[] = [];
    for (let index = 0; index < 30; index += 1) answers.push(await admitted(index % 2, user));
    expect(answers.slice(0, 20).every(Boolean)).toBe(true);
    expect(answers.slice(20).some(Boolean)).toBe(false);
    expect((await counter.get(kvKey("app_copies", user)))?.value.minute.count).toBe(20);
  });
});
