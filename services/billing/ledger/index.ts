import type { NatsConnection } from "@nats-io/transport-node";
import type { Clock, Logger } from "../../../shared/runtime/index.js";
import type { CreditLedger } from "./credit-ledger.js";

export type { Account, BillingPeriod, CreditLedger, CreditSummary } from "./credit-ledger.js";

/**
 * Placeholder until the metering ledger lands: every period holds its included credit,
 * unused. It keeps the shape the real ledger is opened with.
 */
export async function openCreditLedger(_nc: NatsConnection, _options: { replicas: number; clock: Clock; logger: Logger }): Promise<CreditLedger> {
  return {
    summary: async (_account, period) => ({ balance: period.included_credit, used_this_period: 0 }),
  };
}
