import { Piscina } from "piscina";

type RunOptions = NonNullable<Parameters<Piscina["run"]>[1]>;
import { moduleWorkerFile } from "../../../shared/runtime/index.js";
import type { FramingRequest } from "./replay-framing-worker.js";

/**
 * How long the thread may sit idle before it stops: a replica that replays now and then
 * keeps it (starting one costs about half a second of loading), an idle one gives it back.
 */
const IDLE_THREAD_MS = 10 * 60_000;

/**
 * Frames replayed log messages as `log` events on a worker thread of this gateway
 * (`replay-framing-worker.ts`, decision 0090). A replay reads a job's stored messages, up to
 * 256 KiB each, that no feed keeps; decoding, checking and framing them on the event loop
 * held every other request of the replica for milliseconds at a time, and their garbage
 * made the collections that paused it. Piscina runs the thread: it starts at the first
 * replay, and one that fails fails the replays waiting on it (their clients resume) and is
 * replaced.
 */
export class ReplayFraming {
  private readonly pool: Piscina<FramingRequest, Uint8Array | null>;
  private closed = false;

  constructor() {
    this.pool = new Piscina({
      ...moduleWorkerFile(new URL("./replay-framing-worker.js", import.meta.url)),
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: IDLE_THREAD_MS,
    });
  }

  /** The message's lines from `from` on as SSE frames (UTF-8), or null when it is not a log message. */
  frame(data: Uint8Array, streamSeq: number, attempt: number, from: number): Promise<Uint8Array | null> {
    if (this.closed) return Promise.reject(new Error("the gateway's log replay thread is closed"));
    // A copy of the view's bytes alone, moved to the thread (the NATS client's buffer may be larger and reused).
    const own = data.slice();
    // Piscina's type for the list is inferred from an overload of `postMessage`: the array is what it passes on.
    const transferList = [own.buffer] as unknown as RunOptions["transferList"];
    return this.pool.run({ data: own, streamSeq, attempt, from }, { transferList });
  }

  /** Stops the thread; replays still waiting fail. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return this.pool.destroy();
  }
}
