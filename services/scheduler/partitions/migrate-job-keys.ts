import { JetStreamApiError } from "@nats-io/jetstream";
import type { Logger } from "pino";
import { decodeJson } from "../../../shared/nats/index.js";
import { jobKey, LEGACY_JOB_KEYS, parseJobKey } from "../../../shared/records/index.js";
import type { SchedulerStore } from "../scheduler-store.js";

/** Tries per record before the start fails: another writer of the old key form is still running. */
const MOVE_TRIES = 5;

interface MovedFields {
  state?: unknown;
  node_id?: unknown;
  attempt?: unknown;
}

/**
 * Moves the job records written before jobs were partitioned (`<app>.<business>.<job id>`)
 * to their partitioned key (`jobKey`), before this replica watches or serves anything.
 * For each: the record is created under its new key with the same bytes, a reservation of
 * it on a node is pointed at the new key, and the old key is deleted by compare-and-set on
 * the revision copied. Every step can be done twice (by two replicas starting together, or
 * after a crash halfway): a copy already made is brought up to date, a reservation already
 * pointed is left, a delete that finds a newer revision copies that one. A record that keeps
 * changing under its old key means a service of an earlier version is still writing it:
 * the start fails and says so. A bucket with no such record costs one listing.
 */
export async function migrateLegacyJobKeys(
  store: Pick<SchedulerStore, "jobs" | "allocations">,
  instance: string,
  logger: Logger,
): Promise<number> {
  const keys: string[] = [];
  for await (const key of await store.jobs.kv.keys(LEGACY_JOB_KEYS)) keys.push(key);
  if (keys.length === 0) return 0;
  logger.info({ records: keys.length, instance }, "moving job records written before partitioning to their new keys");
  let moved = 0;
  for (const key of keys) {
    if (await moveOne(store, key)) moved += 1;
    if (moved > 0 && moved % 1000 === 0) logger.info({ moved, of: keys.length }, "moving job records");
  }
  logger.info({ moved }, "job records moved to their partitioned keys");
  return moved;
}

async function moveOne(store: Pick<SchedulerStore, "jobs" | "allocations">, oldKey: string): Promise<boolean> {
  const parts = parseJobKey(oldKey);
  if (!parts?.legacy) return false;
  const newKey = jobKey(parts.app_id, parts.business_id, parts.job_id);
  const kv = store.jobs.kv;
  for (let tryNumber = 1; tryNumber <= MOVE_TRIES; tryNumber += 1) {
    const entry = await kv.get(oldKey);
    if (!entry || entry.operation !== "PUT") return false;
    const copied = await kv.get(newKey);
    if (!copied || copied.operation !== "PUT") {
      await kv.create(newKey, entry.value).catch(async (error: unknown) => {
        if (!(error instanceof JetStreamApiError)) throw error;
        // Made meanwhile (another replica): brought up to date below on the next try.
      });
    } else if (!sameBytes(copied.value, entry.value)) {
      await kv.update(newKey, entry.value, copied.revision);
    }
    await pointReservation(store, parts.job_id, oldKey, newKey, decodeJson(entry.value) as MovedFields);
    try {
      await kv.delete(oldKey, { previousSeq: entry.revision });
      return true;
    } catch (error) {
      if (!(error instanceof JetStreamApiError)) throw error;
      // Written again since it was copied: copy that revision.
    }
  }
  throw new Error(
    `the job record ${oldKey} keeps changing under its old key: a service of an earlier version is still running; stop every one before starting this version`,
  );
}

/** Points a node's reservation of the job at its new key. */
async function pointReservation(
  store: Pick<SchedulerStore, "allocations">,
  jobId: string,
  oldKey: string,
  newKey: string,
  record: MovedFields,
): Promise<void> {
  if (typeof record.node_id !== "string" || (record.state !== "assigned" && record.state !== "running")) return;
  await store.allocations.mutate(record.node_id, (allocation) => {
    const reserved = allocation.attempts[jobId];
    if (reserved?.job_key !== oldKey) return undefined;
    return { ...allocation, attempts: { ...allocation.attempts, [jobId]: { ...reserved, job_key: newKey } } };
  });
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}
