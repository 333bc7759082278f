import { z } from "zod";

/** What the BullMQ worker process tells the bench over its IPC channel. */
export const WorkerMessage = z.discriminatedUnion("type", [
  /** The Worker is connected and waiting for jobs. */
  z.object({ type: z.literal("ready") }),
  /** Since the last message: `[job id, monotonic ms]` when the processor began each job, and when each was completed. */
  z.object({
    type: z.literal("events"),
    started: z.array(z.tuple([z.string(), z.number()])),
    completed: z.array(z.tuple([z.string(), z.number()])),
  }),
  z.object({ type: z.literal("error"), message: z.string() }),
]);
export type WorkerMessage = z.infer<typeof WorkerMessage>;

/** What the bench tells the worker process: close the Worker and exit. */
export const WorkerCommand = z.object({ type: z.literal("stop") });
export type WorkerCommand = z.infer<typeof WorkerCommand>;

/** The worker process's environment. */
export const WorkerEnv = z.object({
  BENCH_REDIS_PORT: z.coerce.number().int().min(1).max(65535),
  BENCH_QUEUE: z.string().min(1),
  BENCH_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(10_000),
});
export type WorkerEnv = z.infer<typeof WorkerEnv>;
