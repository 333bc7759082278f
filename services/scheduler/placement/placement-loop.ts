import { Coalesced, type Clock, type Logger } from "../../../shared/runtime/index.js";
import type { QueuedJobs } from "../queue/queued-jobs.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { type PlacementRound, placeOnce } from "./placer.js";
import { WakeTimer } from "./wake-timer.js";

/** The wait before planning again after `rounds` fruitless rounds in a row: 10 ms doubling to 1 s. */
function retryBackoffMs(rounds: number): number {
  return Math.min(1000, 10 * 2 ** (rounds - 1));
}

function earliest(...times: Array<number | null>): number | null {
  const known = times.filter((time): time is number => time !== null);
  return known.length === 0 ? null : Math.min(...known);
}

export interface PlacementLoopDeps {
  logger: Logger;
  clock: Clock;
  queued: QueuedJobs;
  /** The replica's context once started. */
  context: () => SchedulerContext | undefined;
  /** Whether the replica holds a whole picture of its partitions' queue (and is not stopping). */
  mayPlace: () => boolean;
}

/**
 * The replica's placement rounds: never two at once (a request during a round makes one
 * more), each woken by an event (a job queued, a node's room, a key freed), by the wake
 * timer (a job's run_at or backoff ending, a capped node's room), or after a failed round
 * by a bounded backoff, never by a tick.
 */
export class PlacementLoop {
  /** Wakes a round when a job's run_at or backoff ends, a capped node gets room, or after a failed round. */
  readonly wake: WakeTimer;
  /** Rounds in a row that failed or lost every placement: the next one waits a bounded backoff. */
  #fruitless = 0;
  readonly #placing: Coalesced;

  constructor(private readonly deps: PlacementLoopDeps) {
    this.wake = new WakeTimer(deps.clock, () => this.request());
    this.#placing = new Coalesced(() => this.#rounds());
  }

  /** Asks for a round; only from a whole picture of the owned partitions' queue (half of it would break the queue's order). */
  request(): void {
    if (!this.deps.context() || !this.deps.mayPlace()) return;
    void this.#placing.run();
  }

  /** Resolves once no round runs. */
  idle(): Promise<void> {
    return this.#placing.idle();
  }

  stop(): void {
    this.wake.stop();
  }

  async #rounds(): Promise<void> {
    const { logger, queued } = this.deps;
    const context = this.deps.context();
    if (!context) return;
    for (let again = true; again && this.deps.mayPlace(); ) {
      const round = await placeOnce(context, queued).catch((error: unknown): PlacementRound => {
        logger.warn({ err: error }, "placement round failed; planning again after a short backoff");
        // Nothing announces that the broker is back: try again soon.
        return { placed: 0, again: false, wakeAt: null, lost: true };
      });
      this.#fruitless = round.lost && round.placed === 0 ? this.#fruitless + 1 : 0;
      const retryAt = this.#fruitless > 0 ? context.clock.now() + retryBackoffMs(this.#fruitless) : null;
      this.wake.arm(earliest(round.wakeAt, queued.nextDueAt(), retryAt));
      again = round.again;
    }
  }
}
