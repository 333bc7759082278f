/** An attempt a node was given whose start is not written yet. */
export interface PendingStart {
  attempt: number;
  nodeId: string;
  /** When the node was given it: the start's time, whenever it is written. */
  startedAtMs: number;
}

interface Held extends PendingStart {
  timer: NodeJS.Timeout;
}

/**
 * The starts of the attempts this replica's polls gave to nodes, each written a moment
 * after (`delayMs`) unless the attempt's result comes first and writes it with the end, in
 * one change (decision 0095). The node gets its job without waiting for a durable write,
 * and a job that ends within the delay costs one write of its record fewer. A start that
 * is never written (the replica stopped hard) is written by the attempt's result, which
 * the service takes from an assigned attempt as from a running one.
 */
export class DeferredStarts {
  readonly #held = new Map<string, Held>();
  readonly #writing = new Set<Promise<void>>();

  constructor(
    private readonly delayMs: number,
    private readonly write: (jobKey: string, start: PendingStart) => Promise<void>,
  ) {}

  /** Holds the start of an attempt just given to its node; giving it again keeps the first time. */
  defer(jobKey: string, start: PendingStart): void {
    const known = this.#held.get(jobKey);
    if (known && known.attempt === start.attempt && known.nodeId === start.nodeId) return;
    if (known) clearTimeout(known.timer);
    const timer = setTimeout(() => this.#writeNow(jobKey), this.delayMs);
    timer.unref();
    this.#held.set(jobKey, { ...start, timer });
  }

  /** When the attempt was given to the node, while its start is held here unwritten. */
  startedAt(jobKey: string, attempt: number, nodeId: string): number | undefined {
    const known = this.#held.get(jobKey);
    return known && known.attempt === attempt && known.nodeId === nodeId ? known.startedAtMs : undefined;
  }

  /** The attempt's start was written with its end: nothing is left to write. */
  settle(jobKey: string, attempt: number): void {
    const known = this.#held.get(jobKey);
    if (known?.attempt !== attempt) return;
    clearTimeout(known.timer);
    this.#held.delete(jobKey);
  }

  get size(): number {
    return this.#held.size;
  }

  /** Writes every held start now and waits for the writes (the replica is stopping). */
  async flush(): Promise<void> {
    for (const jobKey of [...this.#held.keys()]) this.#writeNow(jobKey);
    await Promise.all([...this.#writing]);
  }

  #writeNow(jobKey: string): void {
    const held = this.#held.get(jobKey);
    if (!held) return;
    clearTimeout(held.timer);
    this.#held.delete(jobKey);
    const { timer: _timer, ...start } = held;
    const writing = this.write(jobKey, start).finally(() => this.#writing.delete(writing));
    this.#writing.add(writing);
  }
}
