/**
 * Whether a KV watch has gone silent, decided from two checks of the bucket: the watch
 * brought nothing between them although, at the first, the bucket already held revisions
 * past the last it had brought. A watch that is only slow brings something in between.
 * Its consumer is then gone (it lived on a NATS node that died; nats.js makes it again
 * only after two missed 30 s heartbeats), and the caller makes a new one from `seen + 1`.
 */
export class WatchSilence {
  #received = 0;
  #seen: number;
  #previous: { received: number; seen: number; last: number } | undefined;

  /** `seen`: the bucket's last revision when the watch started (it and the read after it cover everything up to there). */
  constructor(seen: number) {
    this.#seen = seen;
  }

  /** The last revision the watch brought, or the start. */
  get seen(): number {
    return this.#seen;
  }

  /** The watch brought `revision`. */
  heard(revision: number): void {
    this.#received += 1;
    if (revision > this.#seen) this.#seen = revision;
  }

  /** A check, given the bucket's last revision now: true when the watch is silent. */
  check(last: number): boolean {
    const previous = this.#previous;
    this.#previous = { received: this.#received, seen: this.#seen, last };
    return previous !== undefined && previous.last > previous.seen && this.#received === previous.received;
  }

  /** A new watch was made from `seen + 1`: checks start again. */
  restarted(): void {
    this.#previous = undefined;
  }
}
