import Stripe from "stripe";
import { z } from "zod";
import type { SubscriptionStatus } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { Clock, Logger } from "../../../shared/runtime/index.js";
import type { PlanCatalog } from "../plans/plan-catalog.js";
import type {
  CheckoutRequest,
  CheckoutSession,
  EventPeriod,
  PaymentProvider,
  ProviderEvent,
} from "./payment-provider.js";

export const STRIPE_SIGNATURE_HEADER = "stripe-signature";

export interface StripeProviderOptions {
  secretKey: string;
  webhookSecret: string;
  catalog: PlanCatalog;
  clock: Clock;
  logger: Logger;
  toleranceSeconds: number;
  /** Stripe's API base URL, when it is not api.stripe.com (a stand-in in tests). */
  apiUrl?: string | undefined;
}

/** What billing writes on the session and the subscription, so every event names its business and plan. */
const OurMetadata = z.object({ app_id: z.string().min(1), business_id: z.string().min(1), plan_id: z.string().min(1) });

/** An id field that Stripe sends as an id or, expanded, as an object with one. */
const IdOrObject = z
  .union([z.string(), z.object({ id: z.string() })])
  .nullish()
  .transform((value) => (value == null ? null : typeof value === "string" ? value : value.id));

const CheckoutSessionObject = z.object({
  id: z.string(),
  mode: z.string().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  customer: IdOrObject,
  subscription: IdOrObject,
});

const SubscriptionObject = z.object({
  id: z.string(),
  status: z.string(),
  metadata: z.record(z.string(), z.string()).nullish(),
  customer: IdOrObject,
  ended_at: z.number().nullish(),
  cancel_at_period_end: z.boolean().nullish(),
  canceled_at: z.number().nullish(),
  // Older API versions carry the period on the subscription, newer ones on each item.
  current_period_start: z.number().nullish(),
  current_period_end: z.number().nullish(),
  items: z
    .object({
      data: z.array(
        z.object({
          price: z.object({ id: z.string() }).nullish(),
          current_period_start: z.number().nullish(),
          current_period_end: z.number().nullish(),
        }),
      ),
    })
    .nullish(),
});

/** Stripe's subscription statuses, as billing counts them. */
function statusOf(stripeStatus: string): SubscriptionStatus {
  if (stripeStatus === "active" || stripeStatus === "trialing") return "active";
  if (stripeStatus === "canceled" || stripeStatus === "incomplete_expired") return "canceled";
  return "past_due";
}

function apiOptions(apiUrl: string | undefined) {
  if (!apiUrl) return {};
  const url = new URL(apiUrl);
  const protocol = url.protocol === "http:" ? ("http" as const) : ("https" as const);
  return { host: url.hostname, port: url.port || (protocol === "http" ? 80 : 443), protocol };
}

/**
 * Stripe: a Checkout Session in subscription mode for the plan's Stripe price, and
 * webhooks checked with the endpoint's signing secret (`stripe.webhooks.constructEvent`).
 * The business and plan ride in the session's and the subscription's metadata.
 */
export class StripeProvider implements PaymentProvider {
  readonly name = "stripe";
  private readonly stripe: Stripe;

  constructor(private readonly options: StripeProviderOptions) {
    // Two tries of 10 s at most: inside the 30 s the gateway waits for a checkout.
    this.stripe = new Stripe(options.secretKey, {
      maxNetworkRetries: 1,
      timeout: 10_000,
      telemetry: false,
      ...apiOptions(options.apiUrl),
    });
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    const { plan, account } = request;
    if (!plan.stripe_price_id)
      throw new AppError("request.invalid", `Plan ${plan.id} cannot be bought through Stripe.`);
    const metadata = { app_id: account.app_id, business_id: account.business_id, plan_id: plan.id };
    let session: Stripe.Checkout.Session;
    try {
      session = await this.stripe.checkout.sessions.create({
        mode: "subscription",
        line_items: [{ price: plan.stripe_price_id, quantity: 1 }],
        success_url: request.success_url,
        cancel_url: request.cancel_url,
        client_reference_id: `${account.app_id}.${account.business_id}`,
        metadata,
        subscription_data: { metadata },
        ...(request.customer_id ? { customer: request.customer_id } : {}),
      });
    } catch (error) {
      // Stripe's message may name account details: log it, answer without it.
      this.options.logger.error({ err: error, plan_id: plan.id }, "stripe checkout session could not be created");
      throw new AppError("service.unavailable", "The payment provider did not take the checkout; try again shortly.", {
        retryAfterSeconds: 5,
      });
    }
    if (!session.url)
      throw new AppError("service.unavailable", "The payment provider returned no checkout page; try again shortly.", {
        retryAfterSeconds: 5,
      });
    return { session_id: session.id, checkout_url: session.url, expires_at_ms: session.expires_at * 1000 };
  }

  async cancelAtPeriodEnd({ subscription_id }: { subscription_id: string }): Promise<void> {
    try {
      await this.stripe.subscriptions.update(subscription_id, { cancel_at_period_end: true });
    } catch (error) {
      this.options.logger.error(
        { err: error, subscription_id },
        "stripe subscription could not be set to cancel at period end",
      );
      throw new AppError(
        "service.unavailable",
        "The payment provider did not take the cancellation; try again shortly.",
        { retryAfterSeconds: 5 },
      );
    }
  }

  async verifyWebhook(rawBody: Buffer, headers: Readonly<Record<string, string>>): Promise<ProviderEvent> {
    const signature = headers[STRIPE_SIGNATURE_HEADER];
    if (signature === undefined)
      throw new AppError("webhook.signature_invalid", `The ${STRIPE_SIGNATURE_HEADER} header is missing.`);
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(
        rawBody,
        signature,
        this.options.webhookSecret,
        this.options.toleranceSeconds,
        undefined,
        this.options.clock.now(),
      );
    } catch (error) {
      if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
        throw new AppError("webhook.signature_invalid", "The Stripe signature does not match the body, or is too old.");
      }
      throw new AppError("request.invalid", "The webhook body is not a Stripe event.");
    }
    const base = { provider: this.name, event_id: event.id, created_at_ms: event.created * 1000, type: event.type };
    const object: unknown = event.data?.object;
    switch (event.type) {
      case "checkout.session.completed":
        return { ...base, ...this.checkoutCompleted(object) };
      case "customer.subscription.created":
      case "customer.subscription.updated":
      case "customer.subscription.resumed":
      case "customer.subscription.paused":
        return { ...base, ...this.subscriptionChanged(object) };
      case "customer.subscription.deleted":
        return { ...base, ...this.subscriptionDeleted(object, event.created) };
      default:
        return { ...base, kind: "ignored" };
    }
  }

  private checkoutCompleted(object: unknown): EventBody {
    const session = CheckoutSessionObject.safeParse(object);
    const metadata = OurMetadata.safeParse(session.data?.metadata);
    if (!session.success || !metadata.success || session.data.mode !== "subscription") return { kind: "ignored" };
    const { app_id, business_id, plan_id } = metadata.data;
    return {
      kind: "checkout_completed",
      account: { app_id, business_id },
      plan_id,
      customer_id: session.data.customer,
      subscription_id: session.data.subscription,
      period: null,
      session_ref: null,
    };
  }

  private subscriptionChanged(object: unknown): EventBody {
    const subscription = SubscriptionObject.safeParse(object);
    const metadata = OurMetadata.safeParse(subscription.data?.metadata);
    if (!subscription.success || !metadata.success) return { kind: "ignored" };
    const { app_id, business_id } = metadata.data;
    // The price decides the plan, so a change made in Stripe (its portal, its dashboard) shows here.
    const priceId = subscription.data.items?.data[0]?.price?.id;
    const plan =
      (priceId ? this.options.catalog.findByStripePrice(priceId) : undefined) ??
      this.options.catalog.find(metadata.data.plan_id);
    if (!plan) return { kind: "ignored" };
    return {
      kind: "subscription_updated",
      account: { app_id, business_id },
      plan_id: plan.id,
      status: statusOf(subscription.data.status),
      customer_id: subscription.data.customer,
      subscription_id: subscription.data.id,
      period: periodOf(subscription.data),
      cancel_at_period_end: subscription.data.cancel_at_period_end ?? null,
    };
  }

  private subscriptionDeleted(object: unknown, createdSeconds: number): EventBody {
    const subscription = SubscriptionObject.safeParse(object);
    const metadata = OurMetadata.safeParse(subscription.data?.metadata);
    if (!subscription.success || !metadata.success) return { kind: "ignored" };
    const { app_id, business_id } = metadata.data;
    const endedSeconds = subscription.data.ended_at ?? subscription.data.canceled_at ?? createdSeconds;
    return {
      kind: "subscription_canceled",
      account: { app_id, business_id },
      subscription_id: subscription.data.id,
      ended_at_ms: endedSeconds * 1000,
    };
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event without its envelope fields (id, type, time). */
type EventBody = DistributiveOmit<ProviderEvent, "provider" | "event_id" | "created_at_ms" | "type">;

function periodOf(subscription: z.infer<typeof SubscriptionObject>): EventPeriod | null {
  const item = subscription.items?.data[0];
  const start = item?.current_period_start ?? subscription.current_period_start;
  const end = item?.current_period_end ?? subscription.current_period_end;
  return start != null && end != null ? { start_ms: start * 1000, end_ms: end * 1000 } : null;
}
