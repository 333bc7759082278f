import { describe, expect, it } from "vitest";
import { giveBack, LEASE_MAX, leaseBinding, takeLease } from "./lease.js";
import { decideMany, type RateLimitPolicy, type RateLimitRecord } from "./windows.js";

const policy: RateLimitPolicy = { second: 1000, minute: 400, hour: 10_000 };
const T0 = Date.parse("2026-06-01T10:00:00.250Z");

/** The record after `count` requests at `nowMs`. */
function after(count: number, nowMs = T0, from: RateLimitRecord | null = null): RateLimitRecord {
  const { next } = decideMany(from, nowMs, policy, count);
  if (!next) throw new Error("expected the requests admitted");
  return next;
}

describe("rate-limit leases", () => {
  it("counts the tokens in every window, and says how much room each had left after them", () => {
    const taken = takeLease(after(100), T0, policy, 20);
    expect(taken?.lease).toMatchObject({ tokens: 20, roomAfter: { second: 880, minute: 280, hour: 9880 } });
    expect(taken?.next).toMatchObject({ second: { count: 120 }, minute: { count: 120 }, hour: { count: 120 } });
    // The second ends first: past it the tokens were counted in a window that is gone.
    expect(taken?.lease.untilMs).toBe(T0 + 1000);
  });

  it("takes no more than a tenth of the room left in the tightest window, nor LEASE_MAX", () => {
    expect(takeLease(after(300), T0, policy, 50)?.lease.tokens).toBe(10);
    expect(takeLease(null, T0, { second: 1e6, minute: 1e7, hour: 1e9 }, 5000)?.lease.tokens).toBe(LEASE_MAX);
  });

  it("takes none near a limit, so the last requests of a window are each counted on their own", () => {
    expect(takeLease(after(391), T0, policy, 50)).toBeNull();
    expect(takeLease(after(10), T0, policy, 0)).toBeNull();
  });

  it("counts a lease in windows that reset since the record was written as fresh windows", () => {
    const taken = takeLease(after(100), T0 + 61_000, policy, 5);
    expect(taken?.next).toMatchObject({
      second: { start_ms: T0 + 61_000, count: 5 },
      minute: { count: 5 },
      hour: { count: 105 },
    });
  });

  it("gives unused tokens back to the windows still the ones they were counted in, and never below zero", () => {
    const taken = takeLease(after(100), T0, policy, 20);
    if (!taken) throw new Error("expected a lease");
    const { tokens, starts } = taken.lease;
    // A second later the second window has moved on: only the minute and the hour get the 20 back.
    const later = after(1, T0 + 1000, taken.next);
    expect(giveBack(later, [{ tokens, starts }])).toMatchObject({
      second: { start_ms: T0 + 1000, count: 1 },
      minute: { count: 101 },
      hour: { count: 101 },
    });
    expect(giveBack(after(1), [{ tokens: 5, starts: { second: T0, minute: T0, hour: T0 } }])).toMatchObject({
      minute: { count: 0 },
    });
  });

  it("gives back nothing when there is nothing to give: the same record", () => {
    const record = after(3);
    expect(giveBack(record, [])).toBe(record);
    expect(giveBack(null, [{ tokens: 2, starts: { second: T0, minute: T0, hour: T0 } }])).toBeNull();
  });

  it("reports for a request admitted from the lease the room of the tightest window, the tokens still held counted as room", () => {
    const taken = takeLease(after(100), T0, policy, 20);
    if (!taken) throw new Error("expected a lease");
    taken.lease.tokens -= 1;
    expect(leaseBinding(taken.lease, T0 + 100, policy)).toEqual({
      window: "minute",
      limit: 400,
      remaining: 299,
      resetMs: 59_900,
    });
  });
});
