import { queueGroups } from "../../shared/nats/index.js";
import { type ServiceDeps, serviceLifecycle } from "../../shared/process/index.js";
import type { Service } from "../../shared/runtime/index.js";
import type { LogRelayConfig } from "./config.js";
import { jobLogSummary } from "./job-log-summary.js";
import { LogQuotas } from "./log-quotas.js";
import { openLogStore } from "./log-store.js";
import { LogUsage } from "./log-usage.js";
import { measuredPush } from "./log-relay-metrics.js";
import { purgeJobLogs } from "./purge-job-logs.js";
import { pushLogs } from "./push-logs.js";

const SERVICE = "log-relay";

/**
 * Builds the log relay, the owner of job log lines: it stores the nodes' idempotent,
 * sequence-numbered log batches in a stream keyed by job, up to caps per job (lines and
 * bytes) and quotas per node and business (bytes per hour and per day), answers a
 * job's log totals and removes a deleted job's lines. The gateway's SSE reads the stream itself.
 */
export function buildLogRelay(deps: ServiceDeps<LogRelayConfig>): Service {
  const { nc, logger, config, clock } = deps;
  let usage: LogUsage | undefined;
  return serviceLifecycle({
    name: SERVICE,
    nc,
    logger,
    queue: queueGroups.logRelay,
    async start(run) {
      const store = await openLogStore(nc, config, logger);
      usage = new LogUsage({ nc, jsm: store.jsm, logger, clock, flushMs: config.CJS_LOG_USAGE_FLUSH_MS });
      usage.start();
      const quotas = new LogQuotas({
        nc,
        usage,
        clock,
        logger,
        nodeBytesPerHour: config.CJS_LOG_MAX_BYTES_PER_NODE_PER_HOUR,
      });
      run.serve("logsPush", measuredPush(pushLogs(store, config, quotas)));
      run.serve("logsSummary", jobLogSummary(store));
      run.serve("logsPurge", purgeJobLogs(store));
    },
    async stop(drain) {
      await drain();
      // The bytes counted since the last flush reach the shared counters before the connection goes.
      await usage?.stop();
    },
  });
}
