import type { Clock } from "../../../shared/runtime/index.js";

/**
 * One timer that calls `wake` at the earliest time asked for: a job whose `run_at` or
 * retry backoff ends, a node at its hourly cap that gets room again, a round to try again
 * after a failure. Arming a later time than the one armed changes nothing. With an
 * injected clock (tests), the time left is read from it when armed; `due()` lets a
 * periodic check catch a time the real timer cannot see (a clock moved by hand).
 */
export class WakeTimer {
  #at: number | null = null;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly wake: () => void,
  ) {}

  /** Wakes at `atMs` (clock ms), or earlier if an earlier time is armed. */
  arm(atMs: number | null): void {
    if (atMs === null || (this.#at !== null && this.#at <= atMs)) return;
    clearTimeout(this.#timer);
    this.#at = atMs;
    this.#timer = setTimeout(() => this.fire(), Math.max(0, atMs - this.clock.now()));
    this.#timer.unref?.();
  }

  /** Whether the armed time has passed by the clock (then it fires now). */
  due(): boolean {
    if (this.#at === null || this.clock.now() < this.#at) return false;
    this.fire();
    return true;
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#at = null;
  }

  private fire(): void {
    clearTimeout(this.#timer);
    this.#at = null;
    this.wake();
  }
}
