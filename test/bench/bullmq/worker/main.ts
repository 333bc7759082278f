/**
 * The BullMQ side's worker, in a process of its own: one Worker with a no-op processor.
 * It reports over IPC when the processor began each job and when the Worker completed it
 * (on the machine's monotonic clock), in batches every 50 ms, so reporting costs little
 * next to the work measured.
 */
import { Worker } from "bullmq";
import { parseConfig } from "../../../../shared/runtime/index.js";
import { monotonicMs } from "../../clock.js";
import { WorkerCommand, WorkerEnv, type WorkerMessage } from "./messages.js";

const FLUSH_EVERY_MS = 50;

const send = (message: WorkerMessage): void => void process.send?.(message);
const env = parseConfig(WorkerEnv, process.env);

let started: Array<[string, number]> = [];
let completed: Array<[string, number]> = [];
const worker = new Worker(
  env.BENCH_QUEUE,
  async (job) => {
    started.push([job.id!, monotonicMs()]);
  },
  // As BullMQ's docs set a Worker up: connection options, from which BullMQ makes its ioredis
  // clients (maxRetriesPerRequest: null on the blocking one, as BullMQ requires).
  { connection: { host: "127.0.0.1", port: env.BENCH_REDIS_PORT }, concurrency: env.BENCH_WORKER_CONCURRENCY },
);
worker.on("completed", (job) => void completed.push([job.id!, monotonicMs()]));
worker.on("error", (error) => send({ type: "error", message: error.message }));

const flush = setInterval(() => {
  if (started.length === 0 && completed.length === 0) return;
  send({ type: "events", started, completed });
  started = [];
  completed = [];
}, FLUSH_EVERY_MS);

let stopping: Promise<void> | undefined;
const stop = (): Promise<void> =>
  (stopping ??= (async () => {
    clearInterval(flush);
    await worker.close();
    process.exit(0);
  })());
process.on("message", (message) => {
  if (WorkerCommand.safeParse(message).success) void stop();
});
process.on("SIGTERM", () => void stop());
// The bench gone (its IPC channel closed): nobody is left to stop this process.
process.on("disconnect", () => void stop());

await worker.waitUntilReady();
send({ type: "ready" });
