import type { NatsConnection } from "@nats-io/transport-node";
import type { Clock, Logger } from "../../shared/runtime/index.js";
import type { BillingStore } from "./billing-store.js";
import type { PaymentProvider } from "./checkout/payment-provider.js";
import type { SandboxProvider } from "./checkout/sandbox-provider.js";
import type { BillingConfig } from "./config.js";
import type { Account, CreditLedger } from "./ledger/index.js";
import type { PlanCatalog } from "./plans/plan-catalog.js";

/** What billing's handlers share; built once at start. */
export interface BillingContext {
  nc: NatsConnection;
  logger: Logger;
  clock: Clock;
  config: Readonly<BillingConfig>;
  store: BillingStore;
  catalog: PlanCatalog;
  ledger: CreditLedger;
  /** The provider checkouts go to: Stripe when configured, else the sandbox. */
  provider: PaymentProvider;
  /** The sandbox, when it is the provider (its checkout page is served only then). */
  sandbox: SandboxProvider | null;
  /** Whether the account is the operator's own business, which is not billed. */
  isOperatorAccount(account: Account): Promise<boolean>;
}
