interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((ok, fail) => ((resolve = ok), (reject = fail)));
  // A failure nobody waits for yet is seen by whoever waits next.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * A byte stream fed one chunk at a time by its writer and read by one consumer (the
 * object store's put). `push` resolves only once the consumer has taken the chunk in and
 * asks for the next, so the writer can never run ahead of the store: memory stays at one
 * chunk whatever the upload's size.
 */
export class ChunkFeed {
  readonly stream: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  /** Resolved when the consumer asks for more. */
  private demand = deferred();
  private failure: { error: unknown } | undefined;

  constructor() {
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => void (this.controller = controller),
        pull: () => this.demand.resolve(),
        cancel: (reason) => this.fail(reason ?? new Error("the consumer stopped reading")),
      },
      { highWaterMark: 0 },
    );
  }

  /** Hands `chunk` to the consumer; resolves once it has been taken in. Rejects once the feed failed. */
  async push(chunk: Uint8Array): Promise<void> {
    this.throwIfFailed();
    await this.demand.promise;
    this.demand = deferred();
    this.throwIfFailed();
    this.controller.enqueue(chunk);
    await this.demand.promise;
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  /** The end of the bytes: the consumer finishes. */
  close(): void {
    if (!this.failure) this.controller.close();
  }

  /** Ends the stream with `error`: the consumer gives up, and a push waiting rejects. */
  fail(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    this.demand.reject(error);
    try {
      this.controller.error(error);
    } catch {
      // Already closed or errored.
    }
  }
}
