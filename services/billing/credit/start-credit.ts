import { AckPolicy, jetstream, jetstreamManager, type ConsumerMessages } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { Business } from "../../../shared/contract/index.js";
import {
  BUCKETS,
  CONSUMERS,
  ensureBuckets,
  ensureMeteringStream,
  JsonBucket,
  STREAMS,
  subjects,
} from "../../../shared/nats/index.js";
import type { ServiceDeps, ServiceRun } from "../../../shared/process/index.js";
import { JobRecord } from "../../../shared/records/index.js";
import type { BillingConfig } from "../config.js";
import type { CreditLedger } from "../ledger/index.js";
import { consumeMetering } from "../metering/meter-jobs.js";
import type { PlanCatalog } from "../plans/plan-catalog.js";
import type { SubscriptionRecord } from "../subscriptions/subscription-record.js";
import { accountPlan } from "./account-plan.js";
import { checkCredit } from "./check-credit.js";
import { KeyBudgetView } from "./key-budget.js";
import type { CreditContext } from "./credit-context.js";
import { listKeySpend } from "./list-key-spend.js";
import { listLedger } from "./list-ledger.js";
import { operatorAccounts } from "./operator-account.js";
import { setCredit } from "./set-credit.js";

/** A metering message held this long without an answer goes to another billing replica. */
const METERING_ACK_WAIT_MS = 30_000;
/**
 * Messages out at once. A message whose attempt is still open is held (nak with a delay)
 * and counts here until it is charged, so the bound is far above what ever waits.
 */
const METERING_MAX_ACK_PENDING = 20_000;

export interface CreditParts {
  /** What the ledger audit shares with metering. */
  ctx: CreditContext;
  stop(): Promise<void>;
}

/**
 * Starts billing's compute-credit side: the ledger, the submit's credit check, the ledger
 * list, the operator's `credit set` (served through `run`), and the metering consumer that
 * charges ended attempts.
 */
export async function startCredit(
  deps: ServiceDeps<BillingConfig>,
  shared: { catalog: PlanCatalog; ledger: CreditLedger; subscriptions: JsonBucket<typeof SubscriptionRecord> },
  run: ServiceRun,
): Promise<CreditParts> {
  const { nc, logger, clock, config } = deps;
  const { catalog, ledger, subscriptions: subscriptionBucket } = shared;
  const replicas = config.CJS_NATS_REPLICAS;
  const kv = await ensureBuckets(nc, [BUCKETS.jobs, BUCKETS.businesses, BUCKETS.apiKeys], { replicas, logger });
  const businesses = new JsonBucket(kv[BUCKETS.businesses], Business);
  const ctx: CreditContext = {
    nc,
    logger,
    clock,
    ledger,
    jobs: new JsonBucket(kv[BUCKETS.jobs], JobRecord),
    businesses,
    apiKeys: new JsonBucket(kv[BUCKETS.apiKeys], KeyBudgetView),
    isOperatorAccount: operatorAccounts(businesses),
    planOf: (account) => accountPlan(subscriptionBucket, catalog, logger, account, clock.now()),
  };

  await ensureMeteringStream(nc, { replicas, logger });
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(STREAMS.metering, {
    durable_name: CONSUMERS.billingMetering,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(METERING_ACK_WAIT_MS),
    max_ack_pending: METERING_MAX_ACK_PENDING,
    max_deliver: -1,
    filter_subject: subjects.meteringAll(),
  });

  run.serve("creditCheck", checkCredit(ctx));
  run.serve("creditLedgerList", listLedger(ctx));
  run.serve("creditKeySpend", listKeySpend(ctx));
  run.serve("adminCreditSet", setCredit(ctx));
  const messages: ConsumerMessages = await consumeMetering(ctx, jetstream(nc));
  return {
    ctx,
    async stop() {
      await messages.close();
    },
  };
}
