import { describe, expect, it } from "vitest";
import type { Plan } from "../../../shared/contract/index.js";
import { periodEnd } from "../checkout/payment-provider.js";
import { applyEvent, type SubscriptionEvent } from "./apply-event.js";
import { effectiveSubscription } from "./subscription-record.js";

const plans = new Map<string, Plan>(
  (["free", "team"] as const).map((id) => [
    id,
    {
      id,
      name: id,
      price: id === "free" ? 0 : 49,
      currency: "usd",
      interval: "month",
      included_credit: 10,
      rates: { cpu_core_hour: 1, memory_gb_hour: 1, gpu_hour: 1 },
      limits: {
        max_job_timeout_seconds: 60,
        max_job_cpu: 1,
        max_log_bytes_per_day: 1_000_000,
        max_artifact_bytes: 1_000_000,
      },
      billed: true,
      retention_days: 30,
    },
  ]),
);
const findPlan = (id: string) => plans.get(id);
const account = { app_id: "app", business_id: "biz_1" };
const T0 = Date.parse("2026-11-22T10:00:00.000Z");

function completed(
  eventId: string,
  createdMs: number,
  subscriptionId = "sub_1",
): Extract<SubscriptionEvent, { kind: "checkout_completed" }> {
  return {
    provider: "sandbox",
    event_id: eventId,
    created_at_ms: createdMs,
    type: "checkout.completed",
    kind: "checkout_completed",
    account,
    plan_id: "team",
    customer_id: "cus_1",
    subscription_id: subscriptionId,
    period: null,
    session_ref: null,
  };
}

describe("applyEvent", () => {
  it("a paid checkout starts the plan's period at the event", () => {
    const record = applyEvent(null, completed("evt_1", T0), findPlan, T0 + 5)!;
    expect(record).toMatchObject({
      plan_id: "team",
      status: "active",
      current_period_start: "2026-11-22T10:00:00.000Z",
      current_period_end: "2026-12-22T10:00:00.000Z",
      last_event_id: "evt_1",
    });
  });

  it("the event that wrote the record changes nothing when applied again", () => {
    const record = applyEvent(null, completed("evt_1", T0), findPlan, T0)!;
    expect(applyEvent(record, completed("evt_1", T0), findPlan, T0 + 1000)).toBeUndefined();
  });

  it("an event older than the one that wrote the record changes nothing", () => {
    const record = applyEvent(null, completed("evt_2", T0), findPlan, T0)!;
    expect(applyEvent(record, completed("evt_1", T0 - 1000), findPlan, T0)).toBeUndefined();
  });

  it("a cancellation of another subscription than the business's changes nothing", () => {
    const record = applyEvent(null, completed("evt_1", T0, "sub_new"), findPlan, T0)!;
    const cancel: SubscriptionEvent = {
      provider: "sandbox",
      event_id: "evt_2",
      created_at_ms: T0 + 1,
      type: "subscription.canceled",
      kind: "subscription_canceled",
      account,
      subscription_id: "sub_old",
      ended_at_ms: T0 + 1,
    };
    expect(applyEvent(record, cancel, findPlan, T0 + 1)).toBeUndefined();
    expect(applyEvent(record, { ...cancel, subscription_id: "sub_new" }, findPlan, T0 + 1)).toMatchObject({
      status: "canceled",
      current_period_end: new Date(T0 + 1).toISOString(),
    });
  });

  it("a paid checkout without a period keeps the period its subscription's earlier event brought", () => {
    const created: SubscriptionEvent = {
      provider: "stripe",
      event_id: "evt_sub",
      created_at_ms: T0,
      type: "customer.subscription.created",
      kind: "subscription_updated",
      account,
      plan_id: "team",
      status: "active",
      customer_id: "cus_1",
      subscription_id: "sub_1",
      period: { start_ms: T0 - 5000, end_ms: T0 + 86_400_000 },
      cancel_at_period_end: null,
    };
    const record = applyEvent(null, created, findPlan, T0)!;
    const after = applyEvent(record, { ...completed("evt_checkout", T0), provider: "stripe" }, findPlan, T0)!;
    expect(after).toMatchObject({
      current_period_start: new Date(T0 - 5000).toISOString(),
      current_period_end: new Date(T0 + 86_400_000).toISOString(),
      last_event_id: "evt_checkout",
    });
  });

  it("an event naming a plan the catalogue lacks changes nothing", () => {
    expect(applyEvent(null, { ...completed("evt_1", T0), plan_id: "gone" }, findPlan, T0)).toBeUndefined();
  });
});

describe("applyEvent and a cancel at period end", () => {
  const cancelledAt = T0 + 60_000;
  const cancelled = {
    ...applyEvent(null, completed("evt_1", T0), findPlan, T0)!,
    cancel_at_period_end: true,
    cancel_requested_at: new Date(cancelledAt).toISOString(),
  };
  const update = (eventId: string, createdMs: number, cancelAtPeriodEnd: boolean | null): SubscriptionEvent => ({
    provider: "sandbox",
    event_id: eventId,
    created_at_ms: createdMs,
    type: "subscription.updated",
    kind: "subscription_updated",
    account,
    plan_id: "team",
    status: "active",
    customer_id: null,
    subscription_id: "sub_1",
    period: null,
    cancel_at_period_end: cancelAtPeriodEnd,
  });

  it("an update made before the cancel does not undo it; one made after it does", () => {
    expect(
      applyEvent(cancelled, update("evt_2", cancelledAt - 1000, false), findPlan, cancelledAt)?.cancel_at_period_end,
    ).toBe(true);
    expect(
      applyEvent(cancelled, update("evt_3", cancelledAt + 1000, false), findPlan, cancelledAt)?.cancel_at_period_end,
    ).toBe(false);
  });

  it("an update that does not say keeps the cancel", () => {
    expect(
      applyEvent(cancelled, update("evt_4", cancelledAt + 1000, null), findPlan, cancelledAt)?.cancel_at_period_end,
    ).toBe(true);
  });

  it("a new purchase (another subscription) renews", () => {
    expect(applyEvent(cancelled, completed("evt_5", cancelledAt + 1000, "sub_2"), findPlan, cancelledAt)).toMatchObject(
      { cancel_at_period_end: false, cancel_requested_at: null },
    );
  });
});

describe("effectiveSubscription", () => {
  const record = { ...applyEvent(null, completed("evt_1", T0), findPlan, T0)!, cancel_at_period_end: true };
  const end = Date.parse(record.current_period_end);

  it("a subscription cancelled at period end holds until the period's end, then the default plan applies", () => {
    expect(effectiveSubscription(record, "free", end - 1)).toMatchObject({
      plan_id: "team",
      cancel_at_period_end: true,
      stored: true,
    });
    expect(effectiveSubscription(record, "free", end)).toMatchObject({
      plan_id: "free",
      cancel_at_period_end: false,
      stored: false,
    });
    expect(effectiveSubscription({ ...record, cancel_at_period_end: false }, "free", end)).toMatchObject({
      plan_id: "team",
      stored: true,
    });
  });
});

describe("periodEnd", () => {
  it("is the same day a month or a year on, clamped to the last day of a shorter month", () => {
    expect(new Date(periodEnd(Date.parse("2026-01-31T08:00:00.000Z"), "month")).toISOString()).toBe(
      "2026-02-28T08:00:00.000Z",
    );
    expect(new Date(periodEnd(Date.parse("2026-11-22T08:00:00.000Z"), "month")).toISOString()).toBe(
      "2026-12-22T08:00:00.000Z",
    );
    expect(new Date(periodEnd(Date.parse("2028-02-29T00:00:00.000Z"), "year")).toISOString()).toBe(
      "2029-02-28T00:00:00.000Z",
    );
  });
});
