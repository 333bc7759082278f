import { z } from "zod";
import { BaseConfig, intSetting, parseConfig, opsSettings } from "../../shared/runtime/index.js";

export const LogRelayConfig = BaseConfig.extend({
  ...opsSettings(9103),
  /** How long log lines are kept. */
  CJS_LOG_RETENTION_DAYS: intSetting(7, { min: 1, max: 3650 }),
  /** Lines kept per job, over all its attempts; later lines are dropped and counted. */
  CJS_LOG_MAX_LINES_PER_JOB: intSetting(100_000, { min: 1, max: 100_000_000 }),
  /** Bytes of line text kept per job, over all its attempts; later lines are dropped and counted, as past the line cap. */
  CJS_LOG_MAX_BYTES_PER_JOB: intSetting(134_217_728, { min: 1024, max: 1_099_511_627_776 }),
  /** Bytes of line text one node may store in a UTC hour, whoever's jobs they are; past it, 429 `logs.quota_exceeded`. */
  CJS_LOG_MAX_BYTES_PER_NODE_PER_HOUR: intSetting(4_294_967_296, { min: 1024, max: 1_099_511_627_776 }),
  /** How often each replica adds the bytes it stored to the shared counters (and learns the others'). */
  CJS_LOG_USAGE_FLUSH_MS: intSetting(1_000, { min: 50, max: 60_000 }),
  /** Size of the log stream (CJS_LOGS); past it the oldest lines go first. Below the JetStream store's size. */
  CJS_LOGS_MAX_BYTES: intSetting(10_737_418_240, { min: 1_048_576, max: 1_125_899_906_842_624 }),
  /**
   * Consumers the log stream admits: each gateway replica holds one per job whose log it
   * streams (`CJS_LOG_STREAM_JOBS_MAX`), so at least replicas × that, with room to spare.
   */
  CJS_LOGS_MAX_CONSUMERS: intSetting(4_096, { min: 16, max: 1_000_000 }),
});
export type LogRelayConfig = z.infer<typeof LogRelayConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<LogRelayConfig> {
  return parseConfig(LogRelayConfig, env);
}
