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
    this.#running = (async () => {
      do {
        this.#again = false;
        await this.pass();
      } while (this.#again);
    })().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Resolves once no pass runs (or at once). */
  async idle(): Promise<void> {
    await this.#running;
  }
}
