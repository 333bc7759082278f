import { z } from "zod";
import {
  publicPlan,
  SANDBOX_SIGNATURE_HEADER,
  sandboxCheckoutPath,
  type SandboxActionReply,
  type SandboxSessionView,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { randomBase62, type Clock } from "../../../shared/runtime/index.js";
import type { BillingStore } from "../billing-store.js";
import type { PlanCatalog } from "../plans/plan-catalog.js";
import {
  periodEnd,
  type CheckoutRequest,
  type CheckoutSession,
  type PaymentProvider,
  type ProviderEvent,
} from "./payment-provider.js";
import { sandboxSessionKey, type SandboxSessionRecord } from "./sandbox-session-record.js";
import { signSandboxPayload, verifySandboxSignature } from "./sandbox-signature.js";

/** `cs_sandbox_` + 32 base62 characters (190 random bits): the checkout page's only credential. */
const SESSION_ID = /^cs_sandbox_[0-9A-Za-z]{32}$/;

const Account = z.object({ app_id: z.string().min(1), business_id: z.string().min(1) });
const Iso = z.iso.datetime();

/** The events the sandbox sends (`checkout.completed`) or accepts signed with its secret (the other two, for trying renewals and cancellations by hand). */
const SandboxEventData = {
  "checkout.completed": Account.extend({
    plan_id: z.string(),
    customer_id: z.string(),
    subscription_id: z.string(),
    period_start: Iso,
    period_end: Iso,
    session_ref: z.string().nullable().default(null),
  }),
  "subscription.updated": Account.extend({
    plan_id: z.string(),
    status: z.enum(["active", "past_due", "canceled"]),
    customer_id: z.string().nullable().default(null),
    subscription_id: z.string(),
    period_start: Iso,
    period_end: Iso,
    cancel_at_period_end: z.boolean().nullable().default(null),
  }),
  "subscription.canceled": Account.extend({ subscription_id: z.string(), ended_at: Iso }),
} as const;

const SandboxEnvelope = z.object({
  id: z.string().regex(/^evt_[0-9A-Za-z_]{1,64}$/),
  type: z.string().min(1).max(100),
  /** Unix seconds, as Stripe writes it. */
  created: z.number().int().nonnegative(),
  data: z.unknown(),
});

export interface SandboxDeps {
  store: BillingStore;
  catalog: PlanCatalog;
  clock: Clock;
  /** The webhook signing secret, shared by every billing replica. */
  secret: Buffer;
  sessionTtlSeconds: number;
  toleranceSeconds: number;
}

function unusable(state: string): AppError {
  return new AppError("state.conflict", `This checkout session is ${state}; start a new checkout.`, {
    details: { state },
  });
}

/**
 * The built-in payment provider: a checkout page served by the gateway and signed webhooks
 * (HMAC-SHA256, Stripe's scheme) sent to the sandbox webhook endpoint, so the whole flow
 * runs with no account anywhere. No money moves.
 */
export class SandboxProvider implements PaymentProvider {
  readonly name = "sandbox";

  constructor(private readonly deps: SandboxDeps) {}

  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    const { store, clock, sessionTtlSeconds } = this.deps;
    const sessionId = `cs_sandbox_${randomBase62(32)}`;
    const now = clock.now();
    const expiresAtMs = now + sessionTtlSeconds * 1000;
    await store.checkoutSessions.create(sandboxSessionKey(sessionId), {
      ...request.account,
      plan_id: request.plan.id,
      success_url: request.success_url,
      cancel_url: request.cancel_url,
      state: "open",
      created_at: new Date(now).toISOString(),
      expires_at: new Date(expiresAtMs).toISOString(),
      event_body: null,
    });
    return {
      session_id: sessionId,
      checkout_url: `${request.origin}${sandboxCheckoutPath(sessionId)}`,
      expires_at_ms: expiresAtMs,
    };
  }

  async verifyWebhook(rawBody: Buffer, headers: Readonly<Record<string, string>>): Promise<ProviderEvent> {
    const { clock, secret, toleranceSeconds } = this.deps;
    verifySandboxSignature(secret, rawBody, headers[SANDBOX_SIGNATURE_HEADER], clock.now(), toleranceSeconds);
    let json: unknown;
    try {
      json = JSON.parse(rawBody.toString("utf8"));
    } catch {
      throw new AppError("request.invalid", "The webhook body is not JSON.");
    }
    const envelope = SandboxEnvelope.safeParse(json);
    if (!envelope.success) throw new AppError("request.invalid", "The webhook body is not a sandbox event.");
    const { id, type, created } = envelope.data;
    const base = { provider: this.name, event_id: id, created_at_ms: created * 1000, type };
    if (!Object.hasOwn(SandboxEventData, type)) return { ...base, kind: "ignored" };
    const data = SandboxEventData[type as keyof typeof SandboxEventData].safeParse(envelope.data.data);
    if (!data.success)
      throw new AppError("request.invalid", `The data of this ${type} event is not as the sandbox writes it.`);
    const value = data.data as Record<string, unknown> & z.infer<typeof Account>;
    const account = { app_id: value.app_id, business_id: value.business_id };
    const period = (start: unknown, end: unknown) => ({
      start_ms: Date.parse(String(start)),
      end_ms: Date.parse(String(end)),
    });
    if (type === "checkout.completed") {
      const completed = value as z.infer<(typeof SandboxEventData)["checkout.completed"]>;
      return {
        ...base,
        kind: "checkout_completed",
        account,
        plan_id: completed.plan_id,
        customer_id: completed.customer_id,
        subscription_id: completed.subscription_id,
        period: period(completed.period_start, completed.period_end),
        session_ref: completed.session_ref,
      };
    }
    if (type === "subscription.updated") {
      const updated = value as z.infer<(typeof SandboxEventData)["subscription.updated"]>;
      return {
        ...base,
        kind: "subscription_updated",
        account,
        plan_id: updated.plan_id,
        status: updated.status,
        customer_id: updated.customer_id,
        subscription_id: updated.subscription_id,
        period: period(updated.period_start, updated.period_end),
        cancel_at_period_end: updated.cancel_at_period_end,
      };
    }
    const canceled = value as z.infer<(typeof SandboxEventData)["subscription.canceled"]>;
    return {
      ...base,
      kind: "subscription_canceled",
      account,
      subscription_id: canceled.subscription_id,
      ended_at_ms: Date.parse(canceled.ended_at),
    };
  }

  /**
   * The sandbox keeps no subscriptions of its own and has no clock to end one: there is
   * nothing to tell it. Billing marks the record, and the subscription ends by the rule at
   * `current_period_end` (see `effectiveSubscription`), as when a provider's event is late.
   */
  async cancelAtPeriodEnd(): Promise<void> {}

  /** What the checkout page shows. Unknown sessions are not found; used, canceled or expired ones are `state.conflict`. */
  async viewSession(sessionId: string): Promise<SandboxSessionView> {
    const session = await this.readSession(sessionId);
    if (session.state === "open" && this.expired(session)) throw unusable("expired");
    if (session.state === "completed" || session.state === "canceled") throw unusable(session.state);
    const plan = this.deps.catalog.find(session.plan_id);
    if (!plan) throw unusable("no longer valid (its plan is gone)");
    return { plan: publicPlan(plan), state: session.state, expires_at: session.expires_at };
  }

  /**
   * Pay or cancel, once. The first Pay makes the session's one event; a Pay while that
   * event is still undelivered sends the same event again (its id makes it count once).
   */
  async act(sessionId: string, action: "pay" | "cancel"): Promise<SandboxActionReply> {
    const { store, clock, secret } = this.deps;
    const key = sandboxSessionKey(sessionId);
    const session = await this.readSession(sessionId);
    if (action === "cancel") {
      if (session.state === "paid" || session.state === "completed") throw unusable(session.state);
      await store.checkoutSessions.mutate(key, (current) =>
        current.state === "open" && !this.expired(current) ? { ...current, state: "canceled" } : undefined,
      );
      return { redirect_url: session.cancel_url, delivery: null };
    }
    let refusal: AppError | undefined;
    const stored = await store.checkoutSessions.mutate(key, (current) => {
      refusal = undefined;
      if (current.state === "paid") return undefined;
      if (current.state !== "open") return void (refusal = unusable(current.state));
      if (this.expired(current)) return void (refusal = unusable("expired"));
      return { ...current, state: "paid", event_body: this.checkoutEvent(current, key) };
    });
    if (refusal) throw refusal;
    if (!stored?.value.event_body) throw new AppError("resource.not_found", "No such checkout session.");
    const body = stored.value.event_body;
    return {
      redirect_url: session.success_url.replaceAll("{CHECKOUT_SESSION_ID}", sessionId),
      delivery: { body, signature: signSandboxPayload(secret, body, clock.now() / 1000) },
    };
  }

  /** Marks the session of an applied checkout event used. */
  async completeSession(sessionRef: string): Promise<void> {
    await this.deps.store.checkoutSessions.mutate(sessionRef, (current) =>
      current.state === "paid" ? { ...current, state: "completed" } : undefined,
    );
  }

  private checkoutEvent(session: SandboxSessionRecord, sessionRef: string): string {
    const now = this.deps.clock.now();
    const plan = this.deps.catalog.find(session.plan_id);
    if (!plan) throw unusable("no longer valid (its plan is gone)");
    return JSON.stringify({
      id: `evt_sandbox_${randomBase62(24)}`,
      type: "checkout.completed",
      created: Math.floor(now / 1000),
      data: {
        app_id: session.app_id,
        business_id: session.business_id,
        plan_id: session.plan_id,
        customer_id: `cus_sandbox_${session.business_id}`,
        subscription_id: `sub_sandbox_${randomBase62(20)}`,
        period_start: new Date(now).toISOString(),
        period_end: new Date(periodEnd(now, plan.interval)).toISOString(),
        session_ref: sessionRef,
      },
    });
  }

  private async readSession(sessionId: string): Promise<SandboxSessionRecord> {
    const stored = SESSION_ID.test(sessionId)
      ? await this.deps.store.checkoutSessions.get(sandboxSessionKey(sessionId))
      : null;
    if (!stored) throw new AppError("resource.not_found", "No such checkout session.");
    return stored.value;
  }

  private expired(session: SandboxSessionRecord): boolean {
    return Date.parse(session.expires_at) <= this.deps.clock.now();
  }
}
