/**
 * A pass that never runs twice at once: `run()` starts it, or, while one runs, asks for
 * one more after it, however many times it is asked meanwhile. So a burst of requests (a
 * job queued, a node freed, a tick) costs one pass in progress and one after it, never a
 * pass each, and nothing asked for is missed.
 */
export class Coalesced {
  #running: Promise<void> | undefined;
  #again = false;

  constructor(private readonly pass: () => Promise<void>) {}

  /** Resolves once a pass that began after this call has ended. */
  run(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    const running = this.#passes();
    // Unless the passes already ended (a pass that threw before returning its promise).
    if (!this.#endedAtOnce) this.#running = running;
    this.#endedAtOnce = false;
    return running;
  }

  #endedAtOnce = false;

  /**
   * The passes while asked for. `#running` is cleared in the same turn as the last check
   * of `#again`: cleared later (a `.finally` on the promise, a turn or two on), a request
   * made in between found a run in progress, asked it for one more, and was never run.
   */
  async #passes(): Promise<void> {
    try {
      do {
        this.#again = false;
        await this.pass();
      } while (this.#again);
    } finally {
      if (this.#running === undefined) this.#endedAtOnce = true;
      this.#running = undefined;
    }
  }

  /** Resolves once no pass runs (or at once). */
  async idle(): Promise<void> {
    await this.#running;
  }
}
