import { Queue } from "bullmq";
import { startBenchProcess, type BenchProcess } from "../bench-process.js";
import type { Cleanup } from "../cleanup.js";
import type { ProcessRef } from "../proc-stats.js";
import type { Progress } from "../progress.js";
import { startRedisServer } from "./redis-server.js";
import { BULLMQ_STACK } from "./versions.js";
import { WorkerMessage } from "./worker/messages.js";

/** The Worker's concurrency: the BullMQ analogue of our 100 node slots. */
export const WORKER_CONCURRENCY = 100;
const WORKER_READY_TIMEOUT_MS = 60_000;

export interface BullWorker {
  readonly process: ProcessRef;
  /** Errors the Worker reported (each one means the run did not go as designed). */
  readonly errors: string[];
  stop(): Promise<void>;
}

/** BullMQ as an application deploys it: a redis-server, a Queue in the client (the bench), and a Worker process. */
export interface BullSide {
  readonly queueName: string;
  readonly queue: Queue;
  /** BullMQ's version and the Redis client under it (ioredis, as BullMQ's docs set it up). */
  readonly driver: string;
  readonly redis: ProcessRef;
  /** Starts the Worker process (concurrency 100, a no-op processor) and waits until it is ready. */
  startWorker(events: {
    onStarted: (jobId: string, atMs: number) => void;
    onCompleted: (jobId: string, atMs: number) => void;
  }): Promise<BullWorker>;
  stop(): Promise<void>;
}

export async function startBullSide(cleanup: Cleanup, progress: Progress, queueName: string): Promise<BullSide> {
  progress.update("starting redis-server");
  const redis = await startRedisServer();
  const stopRedis = cleanup.add("redis-server", () => redis.stop());
  const workers = new Set<BullWorker>();
  let queue: Queue | undefined;
  const stop = async (): Promise<void> => {
    await Promise.all([...workers].map((worker) => worker.stop()));
    await queue?.close().catch(() => undefined);
    await stopRedis();
  };
  try {
    // As BullMQ's docs set a Queue up: connection options, from which BullMQ makes its own ioredis client.
    queue = new Queue(queueName, { connection: { host: "127.0.0.1", port: redis.port } });
    await queue.waitUntilReady();
  } catch (error) {
    await stop();
    throw error;
  }

  const startWorker: BullSide["startWorker"] = async ({ onStarted, onCompleted }) => {
    progress.update("starting the BullMQ worker process");
    const child: BenchProcess = startBenchProcess("BullMQ worker", "test/bench/bullmq/worker/main.ts", {
      BENCH_REDIS_PORT: String(redis.port),
      BENCH_QUEUE: queueName,
      BENCH_WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
    });
    const stopChild = cleanup.add("BullMQ worker", () => child.stop());
    const errors: string[] = [];
    let ready: (() => void) | undefined;
    const readyNow = new Promise<void>((resolve) => (ready = resolve));
    child.onMessage((raw) => {
      const parsed = WorkerMessage.safeParse(raw);
      if (!parsed.success)
        return void errors.push(`the worker sent an unknown message: ${JSON.stringify(raw).slice(0, 200)}`);
      const message = parsed.data;
      if (message.type === "ready") ready?.();
      else if (message.type === "error") errors.push(message.message);
      else {
        for (const [id, at] of message.started) onStarted(id, at);
        for (const [id, at] of message.completed) onCompleted(id, at);
      }
    });
    const worker: BullWorker = {
      process: { name: "worker", pid: child.pid },
      errors,
      stop: async () => {
        workers.delete(worker);
        child.send({ type: "stop" });
        await stopChild();
      },
    };
    workers.add(worker);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        readyNow,
        child.died,
        new Promise<never>(
          (_, reject) =>
            (timer = setTimeout(
              () =>
                reject(
                  new Error(
                    `the BullMQ worker was not ready within ${WORKER_READY_TIMEOUT_MS} ms; its output:\n${child.output()}`,
                  ),
                ),
              WORKER_READY_TIMEOUT_MS,
            )),
        ),
      ]);
    } catch (error) {
      await worker.stop();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return worker;
  };

  return { queueName, queue, driver: BULLMQ_STACK, redis: { name: "redis-server", pid: redis.pid }, startWorker, stop };
}
