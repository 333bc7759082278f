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
