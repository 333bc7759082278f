import type { NatsConnection } from "@nats-io/transport-node";
import { AppError } from "../../shared/errors/index.js";
import { requestRpc, subjects } from "../../shared/nats/index.js";
import { QuotaMemo, type Logger } from "../../shared/runtime/index.js";
import { dayWindow, hourWindow, type LogUsage } from "./log-usage.js";

export interface Account {
  app_id: string;
  business_id: string;
}

function exceeded(limit: "node_hour" | "business_day", maxBytes: number, endsAtMs: number, whose: string): AppError {
  return new AppError(
    "logs.quota_exceeded",
    `${whose} stored its ${maxBytes} bytes of log lines for this ${limit === "node_hour" ? "hour" : "day"} (UTC); later lines are refused until ${new Date(endsAtMs).toISOString()}.`,
    { details: { limit, max_bytes: maxBytes, resets_at: new Date(endsAtMs).toISOString() } },
  );
}

/**
 * The log byte quotas a push is held to, besides its job's own caps: a node's bytes per
 * UTC hour (`CJS_LOG_MAX_BYTES_PER_NODE_PER_HOUR`), so one node cannot fill the broker's
 * store, and a business's bytes per UTC day, its plan's `max_log_bytes_per_day`, so one
 * tenant cannot. A push over either is refused whole with 429 `logs.quota_exceeded`,
 * which the agent does not retry (it drops the attempt's later lines). The business is the
 * job's, not the node's: on an operator pool, the customer's.
 */
export class LogQuotas {
  private readonly quotas: QuotaMemo;

  constructor(
    private readonly deps: {
      nc: NatsConnection;
      usage: LogUsage;
      clock: { now(): number };
      logger: Logger;
      nodeBytesPerHour: number;
    },
  ) {
    this.quotas = new QuotaMemo(deps.clock);
  }

  /** Throws `logs.quota_exceeded` when the node's hour is used up: the first check of a push, before any read of its job. */
  async checkNode(nodeId: string): Promise<void> {
    const hour = hourWindow(this.deps.clock.now());
    const nodeUsed = await this.deps.usage.used(subjects.logUsageOfNode(nodeId, hour.id), hour.endsAtMs);
    if (nodeUsed >= this.deps.nodeBytesPerHour)
      throw exceeded("node_hour", this.deps.nodeBytesPerHour, hour.endsAtMs, "This node");
  }

  /** Throws `logs.quota_exceeded` when the job's business's day is used up. */
  async checkBusiness(account: Account): Promise<void> {
    const maxBytes = await this.businessQuota(account);
    if (maxBytes === null) return;
    const day = dayWindow(this.deps.clock.now());
    const businessUsed = await this.deps.usage.used(
      subjects.logUsageOfBusiness(account.app_id, account.business_id, day.id),
      day.endsAtMs,
    );
    if (businessUsed >= maxBytes) throw exceeded("business_day", maxBytes, day.endsAtMs, "The job's business");
  }

  /** Counts bytes stored for a push in the node's hour and the business's day. */
  record(nodeId: string, account: Account, bytes: number): void {
    const now = this.deps.clock.now();
    const hour = hourWindow(now);
    const day = dayWindow(now);
    this.deps.usage.add(subjects.logUsageOfNode(nodeId, hour.id), hour.endsAtMs, bytes);
    this.deps.usage.add(subjects.logUsageOfBusiness(account.app_id, account.business_id, day.id), day.endsAtMs, bytes);
  }

  /** The business's bytes a day, from its plan through billing (a QuotaMemo: kept a minute, none while billing is silent). */
  private businessQuota(account: Account): Promise<number | null> {
    return this.quotas.get(
      `${account.app_id}/${account.business_id}`,
      async () =>
        (await requestRpc(this.deps.nc, "billingLogQuota", account, { timeoutMs: 2_000 })).max_log_bytes_per_day,
      (error) =>
        this.deps.logger.warn(
          { err: error, business_id: account.business_id },
          "could not read a business's log quota; its pushes are not held to it until billing answers",
        ),
    );
  }
}
