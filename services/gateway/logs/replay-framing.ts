import type { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { startModuleWorker } from "../../../shared/runtime/index.js";
import type { FramingAnswer, FramingRequest } from "./replay-framing-worker.js";

interface Waiting {
  resolve: (framed: Uint8Array | null) => void;
  reject: (error: Error) => void;
}

/**
 * Frames replayed log messages as `log` events on a worker thread of this gateway
 * (`replay-framing-worker.ts`, decision 0090). A replay reads a job's stored messages, up to
 * 256 KiB each, that no feed keeps; decoding, checking and framing them on the event loop
 * held every other request of the replica for milliseconds at a time, and their garbage
 * made the collections that paused it. The thread starts at the first replay; a thread that
 * fails fails the replays waiting on it (their clients resume) and the next one starts anew.
 */
export class ReplayFraming {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private lastId = 0;
  private closed = false;

  constructor(private readonly log: Logger) {}

  /** The message's lines from `from` on as SSE frames (UTF-8), or null when it is not a log message. */
  frame(data: Uint8Array, streamSeq: number, attempt: number, from: number): Promise<Uint8Array | null> {
    if (this.closed) return Promise.reject(new Error("log replay framing is closed"));
    const worker = this.running();
    const id = (this.lastId += 1);
    // A copy of the view's bytes alone, moved to the thread (the client's buffer may be larger and reused).
    const own = data.slice();
    const request: FramingRequest = { id, data: own, streamSeq, attempt, from };
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage(request, [own.buffer as ArrayBuffer]);
    });
  }

  /** Stops the thread; replays still waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.failAll(new Error("log replay framing closed"));
    await worker?.terminate();
  }

  private running(): Worker {
    if (this.worker) return this.worker;
    const worker = startModuleWorker(new URL("./replay-framing-worker.js", import.meta.url));
    // The gateway's sockets keep the process alive; an idle thread must not.
    worker.unref();
    worker.on("message", (answer: FramingAnswer) => {
      const waiting = this.waiting.get(answer.id);
      if (!waiting) return;
      this.waiting.delete(answer.id);
      if ("error" in answer) waiting.reject(new Error(`framing a replayed log message failed: ${answer.error}`));
      else waiting.resolve(answer.framed);
    });
    const lost = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (!this.closed)
        this.log.error({ err: error }, "the log replay framing thread stopped; the next replay starts another");
      this.failAll(error);
    };
    worker.on("error", lost);
    worker.on("exit", (code) => lost(new Error(`the log replay framing thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    this.worker = undefined;
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }
}
