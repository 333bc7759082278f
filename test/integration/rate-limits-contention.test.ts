import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUCKETS, encodeJson, ensureBuckets, JsonBucket, kvKey } from "../../shared/nats/index.js";
import { metricsRegistry, newId, systemClock } from "../../shared/runtime/index.js";
import type { Caller } from "../../services/gateway/identity/authenticator.js";
import { RateLimiter } from "../../services/gateway/rate-limit/rate-limiter.js";
import { RateLimitRecord, type RateLimitPolicy } from "../../services/gateway/rate-limit/windows.js";
import { countingKv } from "../harness/counting-kv.js";
import { startNatsCluster, type NatsClusterHarness } from "../harness/nats-cluster.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";

/**
 * The limiter refuses a request only when the user's window is used up: a compare-and-set
 * that keeps losing, or a NATS server that goes away, lets the request through uncounted.
 * A real nats-server; the "other replica" is a KV handle that writes the user's counter
 * itself before every write of the limiter, so the limiter's write always loses. On the
 * 3-node cluster, where the spurious 429s were seen, the counters' leader is killed: the
 * election that follows refuses nobody either. (Contention alone is the same logic on any
 * NATS, so it runs on one server only.)
 */
let nats: NatsHarness;
let nc: NatsConnection;
let kv: KV;

const logger = pino({ level: "silent" });

/** A limiter over `kv` with the given windows, on the real clock unless one is given. */
function limiterOver(kv: KV, policy: RateLimitPolicy, clock = systemClock): RateLimiter {
  return new RateLimiter({ bucket: new JsonBucket(kv, RateLimitRecord), clock, logger, policy });
}
const policy: RateLimitPolicy = { second: 1_000_000, minute: 1_000_000, hour: 1_000_000 };

function callerOf(userId: string): Caller {
  return {
    app_id: "contention",
    business_id: newId("biz"),
    user_id: userId,
    role: "member",
    credential: { kind: "jwt", session_id: "s" },
  };
}

/** The counter handle of another replica that always writes the key first: every compare-and-set of the limiter loses. */
function alwaysBeaten(real: KV): KV {
  return new Proxy(real, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const bound = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
      if (property !== "update" && property !== "create") return bound;
      return async (key: string, ...rest: unknown[]) => {
        await target.put(
          key,
          encodeJson({ minute: { start_ms: Date.now(), count: 0 }, hour: { start_ms: Date.now(), count: 0 } }),
        );
        return bound(key, ...rest);
      };
    },
  });
}

async function failOpenCount(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("cjs_rate_limit_fail_open_total")?.get();
  return metric?.values.reduce((sum, { value }) => sum + value, 0) ?? 0;
}

async function refusedCount(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("cjs_rate_limited_total")?.get();
  return metric?.values.reduce((sum, { value }) => sum + value, 0) ?? 0;
}

const headers = { header: () => undefined };
const busy = newId("usr");

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  await ensureBuckets(nc, [BUCKETS.rateLimits], { replicas: 1 });
  kv = await new Kvm(jetstream(nc, { timeout: 1000 })).open(BUCKETS.rateLimits);
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

describe("the rate limiter under contention", () => {
  it("admits every request of a batch whose compare-and-set always loses, uncounted, and refuses none", async () => {
    const limiter = limiterOver(alwaysBeaten(kv), policy);
    const [openBefore, refusedBefore] = [await failOpenCount(), await refusedCount()];
    const outcomes = await Promise.allSettled(Array.from({ length: 30 }, () => limiter.admit(callerOf(busy), headers)));
    expect(outcomes.filter((outcome) => outcome.status === "rejected")).toEqual([]);
    expect((await refusedCount()) - refusedBefore).toBe(0);
    expect((await failOpenCount()) - openBefore).toBe(30);
  });

  it("still refuses a user whose window is used up (the same limiter, a bucket nobody else writes)", async () => {
    const limiter = limiterOver(kv, { second: 1_000_000, minute: 2, hour: 100 });
    const caller = callerOf(newId("usr"));
    await limiter.admit(caller, headers);
    await limiter.admit(caller, headers);
    await expect(limiter.admit(caller, headers)).rejects.toMatchObject({ code: "rate.limited" });
  });

  it("refuses a user whose window is used up again without reading the counters, with the same Retry-After", async () => {
    const { kv: counted, reads } = countingKv(kv);
    let nowMs = Date.parse("2026-06-01T10:00:00.000Z");
    const limiter = limiterOver(counted, { second: 1_000_000, minute: 1, hour: 100 }, { now: () => nowMs });
    const caller = callerOf(newId("usr"));
    await limiter.admit(caller, headers);
    await expect(limiter.admit(caller, headers)).rejects.toMatchObject({ code: "rate.limited", retryAfterSeconds: 60 });
    const readsAfterFirstRefusal = reads();
    nowMs += 30_000;
    for (let index = 0; index < 5; index += 1)
      await expect(limiter.admit(caller, headers)).rejects.toMatchObject({
        code: "rate.limited",
        retryAfterSeconds: 30,
        details: { window: "minute", limit: 1 },
      });
    expect(reads()).toBe(readsAfterFirstRefusal);
    // Once the window has reset, the counters decide again: the request is counted in a new minute.
    nowMs += 30_000;
    await limiter.admit(caller, headers);
    const stored = await new JsonBucket(kv, RateLimitRecord).get(kvKey(caller.app_id, caller.user_id));
    expect(stored?.value.minute).toEqual({ start_ms: nowMs, count: 1 });
  });

  it("lets every request through while the NATS server is down, refusing none", async () => {
    const limiter = limiterOver(kv, { second: 1_000_000, minute: 3, hour: 100 });
    const caller = callerOf(newId("usr"));
    await limiter.admit(caller, headers);
    await nats.kill();
    try {
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => limiter.admit(caller, headers)));
      expect(outcomes.filter((outcome) => outcome.status === "rejected")).toEqual([]);
    } finally {
      await nats.restart();
    }
  });
});

describe("the rate limiter on a 3-node cluster (R3 counters)", () => {
  let cluster: NatsClusterHarness;
  let clusterNc: NatsConnection;

  beforeAll(async () => {
    cluster = await startNatsCluster();
    clusterNc = await connect({ servers: [...cluster.urls], maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    await ensureBuckets(clusterNc, [BUCKETS.rateLimits], { replicas: cluster.replicas });
  }, 60_000);

  afterAll(async () => {
    await clusterNc?.close();
    await cluster?.stop();
  });

  it("lets every request through while the counters' leader is killed and another elected, refusing none", async () => {
    const counters = await new Kvm(jetstream(clusterNc, { timeout: 1000 })).open(BUCKETS.rateLimits);
    const limiter = limiterOver(counters, { second: 1_000_000, minute: 1_000, hour: 10_000 });
    const caller = callerOf(newId("usr"));
    await limiter.admit(caller, headers);
    const jsm = await jetstreamManager(clusterNc);
    const leader = (await jsm.streams.info(`KV_${BUCKETS.rateLimits}`)).cluster?.leader;
    // The harness names its nodes n1, n2, n3.
    const leaderIndex = Number(leader?.slice(1)) - 1;
    expect(leaderIndex).toBeGreaterThanOrEqual(0);
    const refusedBefore = await refusedCount();
    await cluster.kill(leaderIndex);
    try {
      for (let round = 0; round < 5; round += 1) {
        const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => limiter.admit(caller, headers)));
        expect(outcomes.filter((outcome) => outcome.status === "rejected")).toEqual([]);
      }
      expect((await refusedCount()) - refusedBefore).toBe(0);
    } finally {
      await cluster.restart(leaderIndex);
    }
  });
});
