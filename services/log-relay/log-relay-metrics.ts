import { Counter, Histogram } from "prom-client";
import type { PushLogsResponse } from "../../shared/contract/index.js";
import { isAppError } from "../../shared/errors/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";

/** Defined once per process: several log-relay replicas may share one (tests, the embedded mode). */
const linesStored = new Counter({
  name: "cjs_log_lines_stored_total",
  help: "Log lines stored in CJS_LOGS (resent lines already stored are not counted again).",
  registers: [metricsRegistry],
});

const linesDropped = new Counter({
  name: "cjs_log_lines_dropped_total",
  help: "Log lines dropped because their job reached CJS_LOG_MAX_LINES_PER_JOB, counted per push (a batch sent again counts again).",
  registers: [metricsRegistry],
});

const pushes = new Counter({
  name: "cjs_log_pushes_total",
  help: "Log pushes answered, by outcome: ok, or the error code of a refusal (job.stale_attempt: the node no longer holds the attempt; service.unavailable: the job's log too busy or NATS unavailable).",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
});

const pushSeconds = new Histogram({
  name: "cjs_log_push_duration_seconds",
  help: "Time to check and store one log push, writes to CJS_LOGS included.",
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

/** The push handler, counted: lines stored and dropped, the outcome, and the time taken. */
export function measuredPush<A>(push: (args: A) => Promise<PushLogsResponse>): (args: A) => Promise<PushLogsResponse> {
  return async (args) => {
    const end = pushSeconds.startTimer();
    try {
      const result = await push(args);
      linesStored.inc(result.accepted);
      linesDropped.inc(result.dropped);
      pushes.inc({ outcome: "ok" });
      return result;
    } catch (error) {
      pushes.inc({ outcome: isAppError(error) ? error.code : "error" });
      throw error;
    } finally {
      end();
    }
  };
}
