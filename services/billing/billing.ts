import { BUCKETS, CONSUMERS, queueGroups, STREAMS, watchConsumers } from "../../shared/nats/index.js";
import { type ServiceDeps, type ServiceRun, serviceLifecycle } from "../../shared/process/index.js";
import type { Service } from "../../shared/runtime/index.js";
import type { BillingContext } from "./billing-context.js";
import { type BillingStore, openBillingStore } from "./billing-store.js";
import { loadBillingSecret, SANDBOX_WEBHOOK_SECRET_KEY } from "./checkout/billing-secret.js";
import type { PaymentProvider } from "./checkout/payment-provider.js";
import { SandboxProvider } from "./checkout/sandbox-provider.js";
import { StripeProvider } from "./checkout/stripe-provider.js";
import type { BillingConfig } from "./config.js";
import { createCheckout } from "./create-checkout.js";
import { getSubscription } from "./get-subscription.js";
import { cancelSubscription } from "./subscriptions/cancel-subscription.js";
import { openCreditLedger } from "./ledger/index.js";
import { listPlans } from "./list-plans.js";
import { lookupArtifactQuota } from "./lookup-artifact-quota.js";
import { lookupLogQuota } from "./lookup-log-quota.js";
import { lookupRetention } from "./lookup-retention.js";
import { loadPlanCatalog, type PlanCatalog } from "./plans/plan-catalog.js";
import { receiveWebhook } from "./receive-webhook.js";
import { sandboxAct } from "./sandbox-act.js";
import { sandboxViewSession } from "./sandbox-view-session.js";
import { startCredit, type CreditParts } from "./credit/start-credit.js";
import { startLedgerAudit, type LedgerAudit } from "./metering/audit-ledger.js";

const SERVICE = "billing";

/** Stripe sells a plan through its price id: every paid plan needs one before Stripe can be on. */
function checkStripePrices(catalog: PlanCatalog): void {
  const missing = catalog.plans.filter((plan) => plan.price > 0 && !plan.stripe_price_id).map((plan) => plan.id);
  if (missing.length > 0)
    throw new Error(
      `Stripe is configured but these paid plans have no stripe_price_id in the plans file: ${missing.join(", ")}`,
    );
}

/** The payment provider: Stripe when its secret key and webhook secret are set, else the built-in sandbox. */
async function openPaymentProvider(
  deps: ServiceDeps<BillingConfig>,
  store: BillingStore,
  catalog: PlanCatalog,
): Promise<{ provider: PaymentProvider; sandbox: SandboxProvider | null }> {
  const { clock, config, logger } = deps;
  if (config.CJS_STRIPE_SECRET_KEY !== undefined && config.CJS_STRIPE_WEBHOOK_SECRET !== undefined) {
    checkStripePrices(catalog);
    const provider = new StripeProvider({
      secretKey: config.CJS_STRIPE_SECRET_KEY,
      webhookSecret: config.CJS_STRIPE_WEBHOOK_SECRET,
      catalog,
      clock,
      logger,
      toleranceSeconds: config.CJS_WEBHOOK_TOLERANCE_SECONDS,
      apiUrl: config.CJS_STRIPE_API_URL,
    });
    return { provider, sandbox: null };
  }
  const sandbox = new SandboxProvider({
    store,
    catalog,
    clock,
    secret: await loadBillingSecret(store.secrets, SANDBOX_WEBHOOK_SECRET_KEY, clock),
    sessionTtlSeconds: config.CJS_CHECKOUT_SESSION_TTL_SECONDS,
    toleranceSeconds: config.CJS_WEBHOOK_TOLERANCE_SECONDS,
  });
  return { provider: sandbox, sandbox };
}

/** Billing's own RPCs: plans, subscriptions, retention, log quotas and artifact budgets of plans, checkout and the provider's webhooks. */
function serveBilling(run: ServiceRun, ctx: BillingContext): void {
  run.serve("billingPlansList", listPlans(ctx));
  run.serve("billingSubscriptionGet", getSubscription(ctx));
  run.serve("billingSubscriptionCancel", cancelSubscription(ctx));
  run.serve("billingRetentionLookup", lookupRetention(ctx));
  run.serve("billingLogQuota", lookupLogQuota(ctx));
  run.serve("billingArtifactQuota", lookupArtifactQuota(ctx));
  run.serve("billingCheckoutCreate", createCheckout(ctx));
  run.serve("billingWebhookReceive", receiveWebhook(ctx));
  run.serve("billingSandboxSessionGet", sandboxViewSession(ctx));
  run.serve("billingSandboxSessionAct", sandboxAct(ctx));
}

/**
 * Builds billing, the owner of plans, subscriptions, checkout with the payment
 * provider (Stripe when CJS_STRIPE_SECRET_KEY is set, else the built-in sandbox) and the
 * compute-credit ledger, which meters finished jobs and audits itself against the job
 * records. A subscription changes through the provider's verified webhook, applied
 * once, and is cancelled at period end through the provider.
 */
export function buildBilling(deps: ServiceDeps<BillingConfig>): Service {
  const { nc, logger, clock, config } = deps;
  let credit: CreditParts | null = null;
  let audit: LedgerAudit | null = null;
  let consumers: { stop(): void } | null = null;
  return serviceLifecycle({
    name: SERVICE,
    nc,
    logger,
    queue: queueGroups.billing,
    async start(run) {
      const catalog = await loadPlanCatalog(config.CJS_BILLING_PLANS_FILE);
      const store = await openBillingStore(nc, { replicas: config.CJS_NATS_REPLICAS, logger });
      const ledger = await openCreditLedger(nc, { replicas: config.CJS_NATS_REPLICAS, clock, logger });
      const { provider, sandbox } = await openPaymentProvider(deps, store, catalog);
      credit = await startCredit(deps, { catalog, ledger, subscriptions: store.subscriptions }, run);
      const isOperatorAccount = credit.ctx.isOperatorAccount;
      serveBilling(run, { nc, logger, clock, config, store, catalog, ledger, provider, sandbox, isOperatorAccount });
      audit = await startLedgerAudit(credit.ctx, { graceMs: config.CJS_LEDGER_AUDIT_GRACE_MS });
      // The metering backlog (charges not yet made) and the audit's, for /metrics.
      consumers = watchConsumers(
        nc,
        [
          { stream: STREAMS.metering, consumer: CONSUMERS.billingMetering },
          { stream: `KV_${BUCKETS.jobs}`, consumer: CONSUMERS.billingLedgerAudit },
        ],
        { intervalMs: config.CJS_JETSTREAM_PROBE_INTERVAL_MS },
      );
      logger.info(
        { plans: catalog.plans.map((plan) => plan.id), default_plan: catalog.defaultPlan.id, provider: provider.name },
        "billing plans loaded",
      );
    },
    async stop() {
      consumers?.stop();
      await audit?.stop();
      await credit?.stop();
    },
  });
}
