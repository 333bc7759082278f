/**
 * A replica's own job writes reach its pictures when the write is answered, not when the
 * watch brings them back: a submitted job is in the queue as soon as its record is
 * written (placement does not wait for the echo), and an echo that comes after the answer
 * is handed to no listener again (it is not decoded a second time). Against a real
 * nats-server; the bucket's writes are wired to the watch as `openReplica` wires them. The
 * server may send the echo before the answer or after it: the feed here holds a job's
 * echoes back until the test lets them go, so each test knows which came first.
 */
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newJobId } from "../../services/scheduler/jobs/submit-job.js";
import {
  type FeedEntry,
  JobsWatch,
  type JobRevision,
  type JobRevisionListener,
  type OpenJobsFeed,
  orderedFeed,
} from "../../services/scheduler/partitions/jobs-watch.js";
import { QueuedJobs } from "../../services/scheduler/queue/queued-jobs.js";
import { JsonBucket } from "../../shared/nats/index.js";
import { JobRecord, jobKey, parseJobKey } from "../../shared/records/index.js";
import { queuedJobRecord } from "../harness/job-records.js";
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

/** Every revision handed to it, in order; resolves a wait when a key's revision arrives. */
class Handed implements JobRevisionListener {
  readonly revisions: JobRevision[] = [];
  readonly #waiting = new Map<string, () => void>();

  apply(revision: JobRevision): void {
    this.revisions.push(revision);
    this.#waiting.get(revision.key)?.();
  }

  dropPartition(): void {}

  of(key: string): number[] {
    return this.revisions.filter((revision) => revision.key === key).map((revision) => revision.revision);
  }

  arrival(key: string): Promise<void> {
    return new Promise((resolve) => this.#waiting.set(key, resolve));
  }
}

/** The bucket's own feed, which stops at the first entry of `key` until `release` is called (and everything after it waits too). */
function holdingBack(key: string): { feed: OpenJobsFeed; release: () => void } {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const feed: OpenJobsFeed = async (kv, filters) => {
    const inner = await orderedFeed(kv, filters);
    return {
      stop: () => inner.stop(),
      position: () => inner.position(),
      async *[Symbol.asyncIterator](): AsyncGenerator<FeedEntry> {
        for await (const entry of inner) {
          if (entry.key === key) await released;
          yield entry;
        }
      },
    };
  };
  return { feed, release };
}

const APP = "app1";
const BUSINESS = "biz_CCCCCCCCCCCCCCCCCCCC";

function job(partition?: number, outside = false): { key: string; partition: number; record: JobRecord } {
  for (;;) {
    const jobId = newJobId(Date.now());
    const key = jobKey(APP, BUSINESS, jobId);
    const at = parseJobKey(key)!.partition;
    if (partition === undefined || (at === partition) !== outside)
      return { key, partition: at, record: queuedJobRecord({ job_id: jobId, app_id: APP, business_id: BUSINESS }) };
  }
}

/** A bucket whose writes are handed to a watch of `partition`, with the echoes of `heldKey` held back. */
async function watchedBucket(partition: number, heldKey: string) {
  bucketNumber += 1;
  const kv = await new Kvm(nc).create(`jobs_own_${bucketNumber}`, { history: 1 });
  const jobs = new JsonBucket(kv, JobRecord);
  const queued = new QueuedJobs();
  const handed = new Handed();
  const { feed, release } = holdingBack(heldKey);
  const watch = new JobsWatch({ jobs }, [queued, handed], undefined, feed);
  jobs.onWritten = (key, revision, record, bytes) =>
    watch.noteWritten(key, revision, record as unknown as Record<string, unknown>, bytes);
  await watch.follow(new Set([partition]));
  await watch.whenReady();
  return { jobs, queued, handed, watch, release, otherWriter: new JsonBucket(kv, JobRecord) };
}

describe("a job record this replica wrote", () => {
  it("is in the queue when its write is answered, and its echo from the watch reaches no listener again", async () => {
    const own = job();
    const { jobs, queued, handed, watch, release, otherWriter } = await watchedBucket(own.partition, own.key);

    const revision = await jobs.create(own.key, own.record);

    // The feed has not handed the echo on: the queue holds the job from the write itself.
    expect(queued.get(own.key)?.revision).toBe(revision);
    expect(handed.of(own.key)).toEqual([revision]);
    // Another writer's later revision of the partition comes after the echo in the stream: once it arrives, the echo has passed.
    const later = job(own.partition);
    const arrived = handed.arrival(later.key);
    release();
    await otherWriter.create(later.key, later.record);
    await arrived;
    expect(handed.of(own.key)).toEqual([revision]);
    expect(watch.seen).toBeGreaterThan(revision);
    await watch.stop();
  });

  it("takes the job out of the queue once it wrote the assignment, before the echoes come", async () => {
    const own = job();
    const { jobs, queued, handed, watch, release, otherWriter } = await watchedBucket(own.partition, own.key);
    const created = await jobs.create(own.key, own.record);

    const assigned = await jobs.update(
      own.key,
      { ...own.record, state: "assigned", attempt: 1, node_id: "node_1" },
      created,
    );

    expect(queued.get(own.key)).toBeUndefined();
    const later = job(own.partition);
    const arrived = handed.arrival(later.key);
    release();
    await otherWriter.create(later.key, later.record);
    await arrived;
    expect(handed.of(own.key)).toEqual([created, assigned]);
    await watch.stop();
  });

  it("of a partition the replica does not watch reaches no listener", async () => {
    const watched = job();
    const elsewhere = job(watched.partition, true);
    const { jobs, queued, handed, watch, release } = await watchedBucket(watched.partition, watched.key);
    release();

    await jobs.create(elsewhere.key, elsewhere.record);
    const arrived = handed.arrival(watched.key);
    await jobs.create(watched.key, watched.record);
    await arrived;

    expect(handed.of(elsewhere.key)).toEqual([]);
    expect(queued.get(elsewhere.key)).toBeUndefined();
    await watch.stop();
  });

  it("is handed on once whether the watch brought it before the write was answered or after", async () => {
    const own = job();
    const { jobs, queued, handed, watch, release } = await watchedBucket(own.partition, own.key);
    release();
    const revision = await jobs.create(own.key, own.record);
    await watch.caughtUp();

    // Whichever came first, the listeners were handed it once.
    expect(handed.of(own.key)).toEqual([revision]);
    expect(queued.get(own.key)?.revision).toBe(revision);
    await watch.stop();
  });
});
