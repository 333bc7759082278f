import type { Plan, SubscriptionStatus } from "../../../shared/contract/index.js";
import type { Account } from "../ledger/index.js";

export interface CheckoutRequest {
  account: Account;
  plan: Plan;
  success_url: string;
  cancel_url: string;
  /** `scheme://host[:port]` the client addressed (the sandbox serves its page there). */
  origin: string;
  /** The business's customer id at this provider, when it bought through it before. */
  customer_id: string | null;
}

export interface CheckoutSession {
  session_id: string;
  checkout_url: string;
  expires_at_ms: number;
}

/** The period a provider event sets, when it says. */
export interface EventPeriod {
  start_ms: number;
  end_ms: number;
}

/**
 * A provider's webhook event, reduced to what billing acts on. `account` comes from the
 * metadata billing put on the checkout, so an event names the business it was bought for.
 */
export type ProviderEvent = {
  provider: string;
  /** The provider's own event id: what makes a delivery count once. */
  event_id: string;
  /** When the provider made the event (orders events about one subscription). */
  created_at_ms: number;
  /** The provider's event type, as it named it. */
  type: string;
} & (
  | {
      /** A checkout was paid: the business is now on the plan. */
      kind: "checkout_completed";
      account: Account;
      plan_id: string;
      customer_id: string | null;
      subscription_id: string | null;
      /** Absent when the provider does not say: the period starts at the event. */
      period: EventPeriod | null;
      /** The sandbox's own session reference, to mark the session used. */
      session_ref: string | null;
    }
  | {
      /** The subscription was renewed or changed (plan, status, period). */
      kind: "subscription_updated";
      account: Account;
      plan_id: string;
      status: SubscriptionStatus;
      customer_id: string | null;
      subscription_id: string;
      period: EventPeriod | null;
      /** Whether the subscription ends at its period's end; null when the event does not say. */
      cancel_at_period_end: boolean | null;
    }
  | {
      /** The subscription ended. */
      kind: "subscription_canceled";
      account: Account;
      subscription_id: string;
      ended_at_ms: number;
    }
  | {
      /** A verified event billing does not act on (another type, or one without our metadata). */
      kind: "ignored";
    }
);

/** A payment provider: where checkouts happen and whose signed webhooks change subscriptions. */
export interface PaymentProvider {
  /** `stripe` or `sandbox`: the `{provider}` of its webhook path. */
  readonly name: string;
  createCheckout(request: CheckoutRequest): Promise<CheckoutSession>;
  /**
   * Checks the signature over the exact body and reads the event. Throws
   * `webhook.signature_invalid` for a bad, missing or stale signature, and
   * `request.invalid` for a signed body it cannot read.
   */
  verifyWebhook(rawBody: Buffer, headers: Readonly<Record<string, string>>): Promise<ProviderEvent>;
  /**
   * Tells the provider to end the subscription at the end of its current period (no
   * renewal). Throws `service.unavailable` when the provider does not take it.
   */
  cancelAtPeriodEnd(subscription: { account: Account; subscription_id: string }): Promise<void>;
}

/** The end of a period of `interval` starting at `startMs` (same day of the next month or year, clamped to its last day). */
export function periodEnd(startMs: number, interval: Plan["interval"]): number {
  const start = new Date(startMs);
  const months = interval === "year" ? 12 : 1;
  const target = new Date(startMs);
  target.setUTCDate(1);
  target.setUTCMonth(start.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(start.getUTCDate(), lastDay));
  return target.getTime();
}
