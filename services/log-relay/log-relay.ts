import { randomUUID } from "node:crypto";
import type { Subscription } from "@nats-io/transport-node";
import { JobLogSummaryCommand, PurgeJobDataCommand, PushLogsCommand } from "../../shared/contract/index.js";
import { queueGroups, serveRpc, servePing, subjects } from "../../shared/nats/index.js";
import type { ServiceDeps } from "../../shared/process/index.js";
import type { Service } from "../../shared/runtime/index.js";
import type { LogRelayConfig } from "./config.js";
import { jobLogSummary } from "./job-log-summary.js";
import { openLogStore } from "./log-store.js";
import { measuredPush } from "./log-relay-metrics.js";
import { purgeJobLogs } from "./purge-job-logs.js";
import { pushLogs } from "./push-logs.js";

const SERVICE = "log-relay";

/**
 * Builds the log relay, the owner of job log lines: it stores the nodes' idempotent,
 * sequence-numbered log batches in a stream keyed by job, up to a cap per job, answers a
 * job's log totals and removes a deleted job's lines. The gateway's SSE reads the stream itself.
 */
export function buildLogRelay(deps: ServiceDeps<LogRelayConfig>): Service {
  const { nc, logger, config } = deps;
  const instance = randomUUID();
  const subscriptions: Subscription[] = [];
  let started = false;
  let stopped = false;
  return {
    name: SERVICE,
    async start() {
      const store = await openLogStore(nc, config, logger);
      subscriptions.push(
        servePing(nc, { service: SERVICE, instance, logger }),
        serveRpc(nc, {
          subject: subjects.logsPush(),
          queue: queueGroups.logRelay,
          request: PushLogsCommand,
          logger,
          handle: measuredPush(pushLogs(store, config)),
        }),
        serveRpc(nc, {
          subject: subjects.logsSummary(),
          queue: queueGroups.logRelay,
          request: JobLogSummaryCommand,
          logger,
          handle: jobLogSummary(store),
        }),
        serveRpc(nc, {
          subject: subjects.logsPurge(),
          queue: queueGroups.logRelay,
          request: PurgeJobDataCommand,
          logger,
          handle: purgeJobLogs(store),
        }),
      );
      // Ready only once the server knows the subscriptions.
      await nc.flush();
      started = true;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all(subscriptions.map((subscription) => subscription.drain()));
    },
    ready: () => started && !stopped,
  };
}
