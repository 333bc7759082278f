/**
 * The job watch does not trust the broker to bring every revision: the soak once saw a
 * placing replica's watch never bring a queued job's only revision, so that job was never
 * placed while the other replica had it. Here the miss is made by hand (the feed handed to
 * `JobsWatch` drops the entries of one key) against a real nats-server, and the job must
 * still reach the queue, read from the bucket and counted in
 * `cjs_job_repairs_total{kind="watch_skipped"}`. The watch follows one partition, as a
 * replica follows those it owns.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FeedEntry,
  JobsWatch,
  type JobRevision,
  type JobRevisionListener,
  type OpenJobsFeed,
  orderedFeed,
} from "../../services/scheduler/partitions/jobs-watch.js";
import { QueuedJobs } from "../../services/scheduler/queue/queued-jobs.js";
import { encodeJson, JsonBucket } from "../../shared/nats/index.js";
import { JobRecord } from "../../shared/records/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";

let nats: NatsHarness;
let nc: NatsConnection;
let bucketNumber = 0;

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

/** Resolves when a revision of a key reaches the listeners (registered after the queue, so the queue has it by then). */
class Arrivals implements JobRevisionListener {
  readonly #waiting = new Map<string, Array<(revision: JobRevision) => void>>();

  apply(revision: JobRevision): void {
    for (const resolve of this.#waiting.get(revision.key)?.splice(0) ?? []) resolve(revision);
  }

  dropPartition(): void {}

  next(key: string): Promise<JobRevision> {
    return new Promise((resolve) => {
      const waiting = this.#waiting.get(key) ?? [];
      waiting.push(resolve);
      this.#waiting.set(key, waiting);
    });
  }
}

/** The bucket's own feed, less the entries `lose` picks: a broker that skipped them. */
function losing(lose: (entry: FeedEntry) => boolean): OpenJobsFeed {
  return async (kv, filters) => {
    const inner = await orderedFeed(kv, filters);
    return {
      stop: () => inner.stop(),
      position: () => inner.position(),
      async *[Symbol.asyncIterator](): AsyncGenerator<FeedEntry> {
        for await (const entry of inner) if (!lose(entry)) yield entry;
      },
    };
  };
}

/** A key of the watched partition (5), in the partitioned form. */
const key = (jobId: string) => `s05.app_test.biz_test.${jobId}`;

function queuedRecord(jobId: string, state = "queued"): Uint8Array {
  return encodeJson({
    job_id: jobId,
    state,
    attempt: 0,
    app_id: "app_test",
    business_id: "biz_test",
    pool_id: "default",
    pool_key: "op.app_test.default",
    type: "shell",
    labels: {},
    resources: { cpu: 0.25, memory_mb: 64, gpu: 0 },
    priority: 0,
    queued_at: new Date().toISOString(),
    pending_reason: "waiting_for_scheduler",
  });
}

/** A fresh bucket for one test, holding a queued job of the watched partition for each id. */
async function bucketWith(jobIds: readonly string[]): Promise<KV> {
  bucketNumber += 1;
  const kv = await new Kvm(nc).create(`jobs_gaps_${bucketNumber}`, { history: 1 });
  for (const jobId of jobIds) await kv.put(key(jobId), queuedRecord(jobId));
  return kv;
}

async function watched(
  lose: (entry: FeedEntry) => boolean,
): Promise<{ kv: KV; watch: JobsWatch; queued: QueuedJobs; arrivals: Arrivals }> {
  bucketNumber += 1;
  const kv = await new Kvm(nc).create(`jobs_gaps_${bucketNumber}`, { history: 1 });
  const queued = new QueuedJobs();
  const arrivals = new Arrivals();
  const watch = new JobsWatch({ jobs: new JsonBucket(kv, JobRecord) }, [queued, arrivals], undefined, losing(lose));
  await watch.follow(new Set([5]));
  await watch.whenReady();
  return { kv, watch, queued, arrivals };
}

async function watchSkippedRepairs(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("cjs_job_repairs_total")?.get();
  return metric?.values.find((value) => value.labels.kind === "watch_skipped")?.value ?? 0;
}

describe("a job revision the watch skipped", () => {
  it("is read from the bucket once the next one shows a jump in the consumer's sequence, behind the watch, which does not wait for the read", async () => {
    const lost = key("job_lost");
    const next = key("job_next");
    const { kv, watch, queued, arrivals } = await watched((entry) => entry.key === lost);
    const before = await watchSkippedRepairs();
    const nextArrives = arrivals.next(next);

    const lostRevision = await kv.put(lost, queuedRecord("job_lost"));
    await kv.put(next, queuedRecord("job_next"));

    // The next revision reaches the listeners; the gap it showed is read behind it.
    await nextArrives;
    await watch.gapsRead();
    expect(queued.get(lost)?.revision).toBe(lostRevision);
    expect(queued.get(next)).toBeDefined();
    expect(await watchSkippedRepairs()).toBe(before + 1);
    await watch.stop();
  });

  it("is read by the repair sweep when it was the partition's last: the watch did not move between two checks", async () => {
    const lost = key("job_last");
    const { kv, watch, queued } = await watched((entry) => entry.key === lost);
    await kv.put(key("job_earlier"), queuedRecord("job_earlier"));
    expect(await watch.caughtUp()).toBe(true);
    const before = await watchSkippedRepairs();

    const lostRevision = await kv.put(lost, queuedRecord("job_last"));
    // The first check only notes where the watch and the bucket are: a watch may just be slow.
    await watch.recoverStalled();
    expect(queued.get(lost)).toBeUndefined();
    await watch.recoverStalled();

    expect(queued.get(lost)?.revision).toBe(lostRevision);
    expect(await watchSkippedRepairs()).toBe(before + 1);
    await watch.stop();
  });

  it("is not a repair when a later revision of the same job replaced it (the bucket keeps one per job)", async () => {
    const replaced = key("job_replaced");
    const next = key("job_after");
    // A fresh bucket: the job's first revision is the stream's first message.
    const { kv, watch, queued, arrivals } = await watched((entry) => entry.key === replaced && entry.revision === 1);
    const before = await watchSkippedRepairs();
    const replacedArrives = arrivals.next(replaced);
    const nextArrives = arrivals.next(next);

    expect(await kv.put(replaced, queuedRecord("job_replaced"))).toBe(1);
    await kv.put(replaced, queuedRecord("job_replaced", "cancelled"));
    await kv.put(next, queuedRecord("job_after"));

    expect((await replacedArrives).record?.state).toBe("cancelled");
    await nextArrives;
    await watch.gapsRead();
    expect(queued.get(replaced)).toBeUndefined();
    expect(queued.get(next)).toBeDefined();
    expect(await watchSkippedRepairs()).toBe(before);
    await watch.stop();
  });
});

describe("the watch's consumer on the server", () => {
  it("is one per watch: following another set of partitions removes the consumer of the set given up, and stopping removes the last", async () => {
    const { watch } = await watched(() => false);
    const stream = `KV_jobs_gaps_${bucketNumber}`;
    const jsm = await jetstreamManager(nc);
    const consumersOnServer = async () => (await jsm.consumers.list(stream).next()).length;
    expect(await consumersOnServer()).toBe(1);

    await watch.follow(new Set([6, 7]));
    await watch.whenReady();
    await watch.follow(new Set([8]));
    await watch.whenReady();
    expect(await consumersOnServer()).toBe(1);

    await watch.stop();
    expect(await consumersOnServer()).toBe(0);
  });
});

/**
 * The bucket's own feed as nats.js shows it when its ordered consumer is made again after
 * `after` messages (heartbeats missed, a NATS node restarted): the rest arrive numbered
 * from 1; the first position asked is answered only once every record has come
 * (`answerPosition`), with the earlier consumer's numbers, and later ones with the new one's.
 */
function remadeAfter(after: number): { feed: OpenJobsFeed; answerPosition: () => void } {
  let answerPosition = (): void => undefined;
  let asked = 0;
  const answered = new Promise<void>((resolve) => (answerPosition = resolve));
  const feed: OpenJobsFeed = async (kv, filters) => {
    const inner = await orderedFeed(kv, filters);
    return {
      stop: () => inner.stop(),
      async position() {
        const { delivered, pending } = await inner.position();
        if (asked++ > 0) return { delivered: delivered - after, pending };
        await answered;
        return { delivered, pending };
      },
      async *[Symbol.asyncIterator](): AsyncGenerator<FeedEntry> {
        for await (const entry of inner)
          yield entry.consumerSeq > after ? { ...entry, consumerSeq: entry.consumerSeq - after } : entry;
      },
    };
  };
  return { feed, answerPosition };
}

describe("a watch whose consumer is made again while it reads its partitions", () => {
  it("becomes ready once every record has come, counted on the new consumer", async () => {
    const jobIds = Array.from({ length: 10 }, (_, index) => `job_remade_${index}`);
    const kv = await bucketWith(jobIds);
    const keys = jobIds.map(key);
    const queued = new QueuedJobs();
    const arrivals = new Arrivals();
    const { feed, answerPosition } = remadeAfter(4);
    const watch = new JobsWatch({ jobs: new JsonBucket(kv, JobRecord) }, [queued, arrivals], undefined, feed);
    const lastArrives = arrivals.next(keys[9]!);

    const following = watch.follow(new Set([5]));
    await lastArrives;
    answerPosition();
    await following;

    expect(watch.ready).toBe(true);
    for (const each of keys) expect(queued.get(each)).toBeDefined();
    expect(await watch.caughtUp()).toBe(true);
    await watch.stop();
  });
});

/**
 * The bucket's own feed, whose consumer is made again when `remake` is called: entries
 * after it are numbered from 1, as nats.js numbers a new ordered consumer's. While
 * `holdPosition` holds, a position asked is answered only at `releasePosition`, counted on
 * the consumer of that moment.
 */
function remadeOnDemand() {
  let offset = 0;
  let lastSeq = 0;
  let held: Promise<void> | undefined;
  let release = (): void => undefined;
  const feed: OpenJobsFeed = async (kv, filters) => {
    const inner = await orderedFeed(kv, filters);
    return {
      stop: () => inner.stop(),
      async position() {
        await held;
        const { delivered, pending } = await inner.position();
        return { delivered: delivered - offset, pending };
      },
      async *[Symbol.asyncIterator](): AsyncGenerator<FeedEntry> {
        for await (const entry of inner) {
          lastSeq = entry.consumerSeq;
          yield { ...entry, consumerSeq: entry.consumerSeq - offset };
        }
      },
    };
  };
  return {
    feed,
    remake: () => void (offset = lastSeq),
    holdPosition: () => void (held = new Promise<void>((resolve) => (release = resolve))),
    releasePosition: () => {
      held = undefined;
      release();
    },
  };
}

describe("a caught-up check while the watch's consumer is made again", () => {
  it("asks the new consumer and answers true, not a refusal", async () => {
    const kv = await bucketWith(Array.from({ length: 3 }, (_, index) => `job_check_${index}`));
    const arrivals = new Arrivals();
    const remaking = remadeOnDemand();
    const watch = new JobsWatch({ jobs: new JsonBucket(kv, JobRecord) }, [arrivals], undefined, remaking.feed);
    await watch.follow(new Set([5]));
    await watch.whenReady();

    remaking.holdPosition();
    const caught = watch.caughtUp();
    remaking.remake();
    const arrived = arrivals.next(key("job_check_3"));
    await kv.put(key("job_check_3"), queuedRecord("job_check_3"));
    await arrived;
    remaking.releasePosition();

    expect(await caught).toBe(true);
    await watch.stop();
  });
});

describe("a caught-up check while the watch is still reading the partitions it was just given", () => {
  it("waits for the read and answers true, not a refusal", async () => {
    const kv = await bucketWith(Array.from({ length: 50 }, (_, index) => `job_given_${index}`));
    const arrivals = new Arrivals();
    const last = arrivals.next(key("job_given_49"));
    const watch = new JobsWatch({ jobs: new JsonBucket(kv, JobRecord) }, [arrivals]);

    // Asked before the consumer is even made, as a list reaching a replica that has just been handed partitions.
    const following = watch.follow(new Set([5]));
    const caught = watch.caughtUp();

    expect(await caught).toBe(true);
    expect(watch.ready).toBe(true);
    await last;
    await following;
    await watch.stop();
  });

  it("gives up after its bound, answering false, when the read does not end", async () => {
    const kv = await bucketWith(["job_stuck"]);
    // A consumer that says one record waits and never brings it.
    const stuck: OpenJobsFeed = async () => ({
      position: async () => ({ delivered: 0, pending: 1 }),
      stop: async () => undefined,
      [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<FeedEntry>>(() => undefined) }),
    });
    const watch = new JobsWatch({ jobs: new JsonBucket(kv, JobRecord) }, [], undefined, stuck);
    await watch.follow(new Set([5]));

    expect(await watch.caughtUp(50)).toBe(false);
    expect(watch.ready).toBe(false);
    await watch.stop();
  });
});

/**
 * The bucket's own feed until `silence` is called, then nothing more, though it never
 * ends: a consumer that died with its NATS node, before nats.js notices. Feeds opened
 * after the first are the bucket's own; `opened` lists where each began.
 */
function silencedFirst(): { feed: OpenJobsFeed; silence: () => void; opened: Array<number | undefined> } {
  let silent = false;
  const opened: Array<number | undefined> = [];
  const feed: OpenJobsFeed = async (kv, filters, fromRevision) => {
    const inner = await orderedFeed(kv, filters, fromRevision);
    const first = opened.length === 0;
    opened.push(fromRevision);
    return {
      stop: () => inner.stop(),
      position: () => inner.position(),
      async *[Symbol.asyncIterator](): AsyncGenerator<FeedEntry> {
        for await (const entry of inner) if (!(first && silent)) yield entry;
      },
    };
  };
  return { feed, silence: () => (silent = true), opened };
}

describe("a watch whose feed falls silent", () => {
  it("is fed again by a consumer made from the next revision once two checks found it silent while records changed", async () => {
    bucketNumber += 1;
    const kv = await new Kvm(nc).create(`jobs_gaps_${bucketNumber}`, { history: 1 });
    const before = await kv.put(key("job_before"), queuedRecord("job_before"));
    const queued = new QueuedJobs();
    const arrivals = new Arrivals();
    const { feed, silence, opened } = silencedFirst();
    const watch = new JobsWatch({ jobs: new JsonBucket(kv, JobRecord) }, [queued, arrivals], undefined, feed);
    await watch.follow(new Set([5]));
    await watch.whenReady();
    expect(queued.get(key("job_before"))?.revision).toBe(before);

    silence();
    const during = await kv.put(key("job_during"), queuedRecord("job_during"));
    // The first check notes where things stand; the second reads what the silence held and makes the feed again.
    await watch.recoverStalled();
    await watch.recoverStalled();
    expect(queued.get(key("job_during"))?.revision).toBe(during);
    // From the revision after the last the silent feed brought: the one read meanwhile comes again, and is ignored.
    expect(opened).toEqual([undefined, before + 1]);

    // A record written after that arrives by the new feed, without another check.
    const afterArrives = arrivals.next(key("job_after"));
    const after = await kv.put(key("job_after"), queuedRecord("job_after"));
    expect((await afterArrives).revision).toBe(after);
    await watch.stop();
  });

  it("silent while it first reads its partitions: they are read again by a new consumer, and the watch becomes ready", async () => {
    bucketNumber += 1;
    const kv = await new Kvm(nc).create(`jobs_gaps_${bucketNumber}`, { history: 1 });
    const stored = await kv.put(key("job_stored"), queuedRecord("job_stored"));
    const queued = new QueuedJobs();
    const { feed, silence, opened } = silencedFirst();
    silence();
    const watch = new JobsWatch({ jobs: new JsonBucket(kv, JobRecord) }, [queued], undefined, feed);
    await watch.follow(new Set([5]));
    expect(watch.ready).toBe(false);
    await watch.recoverStalled();
    await watch.recoverStalled();
    await watch.whenReady();
    expect(queued.get(key("job_stored"))?.revision).toBe(stored);
    expect(opened).toEqual([undefined, undefined]);
    await watch.stop();
  });

  it("is left alone while it is only quiet: no record changed between the checks", async () => {
    bucketNumber += 1;
    const kv = await new Kvm(nc).create(`jobs_gaps_${bucketNumber}`, { history: 1 });
    await kv.put(key("job_only"), queuedRecord("job_only"));
    const { feed, opened } = silencedFirst();
    const watch = new JobsWatch({ jobs: new JsonBucket(kv, JobRecord) }, [new QueuedJobs()], undefined, feed);
    await watch.follow(new Set([5]));
    await watch.whenReady();
    await watch.recoverStalled();
    await watch.recoverStalled();
    await watch.recoverStalled();
    expect(opened).toEqual([undefined]);
    await watch.stop();
  });
});
