export {
  BaseConfig,
  ConfigError,
  NatsPort,
  NatsUrl,
  boolSetting,
  intSetting,
  localNatsUrl,
  natsUrlProblem,
  opsSettings,
  parseConfig,
} from "./config.js";
export { createLogger, scrubCredentialParameters } from "./logger.js";
export type { Logger } from "./logger.js";
export {
  collectProcessMetrics,
  metricsRegistry,
  natsRequestSeconds,
  rpcServedSeconds,
} from "./metrics.js";
export { natsConnected, readiness } from "./health.js";
export type { ReadinessCheck, ReadinessReport } from "./health.js";
export { closeOpsServer, serverUrl, startOpsServer } from "./ops-server.js";
export { installShutdown, systemClock } from "./lifecycle.js";
export type { Clock, Service } from "./lifecycle.js";
export { formatPath, zodIssues } from "./zod-issues.js";
export type { FieldIssue } from "./zod-issues.js";
export { fromBase62, newId, newJobId, randomBase62, toBase62 } from "./ids.js";
export { Coalesced } from "./coalesced.js";
export { QuotaMemo } from "./quota-memo.js";
export { forEachBounded } from "./for-each-bounded.js";
export { settingNames, unknownSettings, warnUnknownSettings } from "./unknown-settings.js";
export type { UnknownSetting } from "./unknown-settings.js";
export { KNOWN_SETTINGS } from "./known-settings.js";
export { nodeFlagsOf } from "./node-flags.js";
