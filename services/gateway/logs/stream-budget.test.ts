import { describe, expect, it } from "vitest";
import { StreamBudget } from "./stream-budget.js";

const alice = { app_id: "acme", business_id: "biz_a", user_id: "usr_alice" };
const bob = { app_id: "acme", business_id: "biz_a", user_id: "usr_bob" };
const carol = { app_id: "acme", business_id: "biz_c", user_id: "usr_carol" };

function refusalOf(take: () => unknown): unknown {
  try {
    take();
  } catch (error) {
    return error;
  }
  throw new Error("expected a refusal");
}

describe("the stream budget", () => {
  it("refuses a user past their streams, naming the limit, and gives the place back once", () => {
    const budget = new StreamBudget({ per_user: 2, per_url: 10, per_business: 10 });
    const first = budget.take(alice);
    budget.take(alice);
    expect(refusalOf(() => budget.take(alice))).toMatchObject({
      code: "logs.stream_limit_reached",
      retryAfterSeconds: 5,
      details: { limit: "per_user", max: 2 },
    });
    budget.take(bob);
    first();
    first();
    budget.take(alice);
    expect(refusalOf(() => budget.take(alice))).toMatchObject({ details: { limit: "per_user" } });
  });

  it("counts each signed URL apart, and a business over all its users, and takes nothing from a refused stream", () => {
    const budget = new StreamBudget({ per_user: 10, per_url: 1, per_business: 3 });
    budget.take({ ...alice, url: "sig-1" });
    expect(refusalOf(() => budget.take({ ...alice, url: "sig-1" }))).toMatchObject({ details: { limit: "per_url" } });
    budget.take({ ...alice, url: "sig-2" });
    budget.take(bob);
    expect(refusalOf(() => budget.take(bob))).toMatchObject({ details: { limit: "per_business", max: 3 } });
    // Another business is not affected.
    budget.take(carol);
  });
});
