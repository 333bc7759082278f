import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "../../../shared/runtime/index.js";
import type { JobsWatch } from "./jobs-watch.js";

/** The first and the longest wait before asking again for a partition watch the server refused. */
const FOLLOW_RETRY_FIRST_MS = 100;
const FOLLOW_RETRY_MAX_MS = 5_000;

/**
 * Points the watch at the partitions the replica owns now, and resolves once it has read
 * them (true), or false when the replica stopped first. A consumer that cannot be made now
 * (a NATS node lost, a leader being elected) is asked for again with a bounded backoff:
 * placement waits for the watch, so nothing else would ever try again.
 */
export async function followOwnedPartitions(
  watch: JobsWatch,
  owned: () => ReadonlySet<number>,
  stopped: () => boolean,
  logger: Logger,
): Promise<boolean> {
  for (let retryMs = FOLLOW_RETRY_FIRST_MS; ; retryMs = Math.min(retryMs * 2, FOLLOW_RETRY_MAX_MS)) {
    // The same partitions as the live feed follows: nothing to read again. A replica whose renewal came back late
    // (its reply queued behind a long replay on a starved machine) lets its partitions go and takes them back a
    // renewal later; it used to start the replay over each time, and under load answered lists 503 for seconds.
    if (watch.following && sameSet(owned(), watch.partitions)) break;
    const followed = await watch.follow(owned()).then(
      () => true,
      (error: unknown) => {
        logger.warn({ err: error, retry_in_ms: retryMs }, "could not watch this replica's partitions; trying again");
        return false;
      },
    );
    if (followed) break;
    await delay(retryMs, undefined, { ref: false });
    if (stopped()) return false;
  }
  await watch.whenReady();
  return !stopped();
}

function sameSet(a: ReadonlySet<number>, b: ReadonlySet<number>): boolean {
  return a.size === b.size && [...a].every((item) => b.has(item));
}
