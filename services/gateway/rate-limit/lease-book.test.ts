import { describe, expect, it } from "vitest";
import type { RateLease } from "./lease.js";
import { LeaseBook } from "./lease-book.js";

const T0 = 1_000_000;
const starts = { second: T0, minute: T0, hour: T0 };

function lease(tokens: number, untilMs = T0 + 1000): RateLease {
  return { tokens, starts, roomAfter: { second: 100, minute: 100, hour: 100 }, untilMs };
}

describe("LeaseBook", () => {
  it("serves a user's requests from its lease until the tokens are gone, and no other user's", () => {
    const book = new LeaseBook(10);
    book.settled("u1", [], lease(2), T0);
    expect(book.take("u2", T0)).toBeUndefined();
    expect(book.take("u1", T0)?.tokens).toBe(1);
    expect(book.take("u1", T0)?.tokens).toBe(0);
    expect(book.take("u1", T0)).toBeUndefined();
  });

  it("serves nothing from a lease past its end, and gives its unused tokens back once, with the next count", () => {
    const book = new LeaseBook(10);
    book.settled("u1", [], lease(3), T0);
    book.take("u1", T0);
    expect(book.take("u1", T0 + 1000)).toBeUndefined();
    const returned = book.returned("u1", T0 + 1000);
    expect(returned).toEqual([{ tokens: 2, starts }]);
    book.settled("u1", returned, null, T0 + 1001);
    expect(book.returned("u1", T0 + 1001)).toEqual([]);
  });

  it("keeps what ran out meanwhile for the count after: only what a count gave back is forgotten", () => {
    const book = new LeaseBook(10);
    book.settled("u1", [], lease(1, T0 + 100), T0);
    book.settled("u1", [], lease(1, T0 + 200), T0);
    const first = book.returned("u1", T0 + 150);
    expect(first).toHaveLength(1);
    expect(book.returned("u1", T0 + 250)).toHaveLength(2);
    book.settled("u1", first, null, T0 + 250);
    expect(book.returned("u1", T0 + 250)).toEqual([{ tokens: 1, starts }]);
  });

  it("wants a lease as large as the user's requests of the last quarter to half second", () => {
    const book = new LeaseBook(10);
    expect(book.want("u1", T0)).toBe(0);
    for (let index = 0; index < 5; index += 1) book.noteAdmitted("u1", T0 + index);
    expect(book.want("u1", T0 + 100)).toBe(5);
    book.noteAdmitted("u1", T0 + 300);
    expect(book.want("u1", T0 + 300)).toBe(6);
    expect(book.want("u1", T0 + 600)).toBe(1);
    expect(book.want("u1", T0 + 2000)).toBe(0);
  });

  it("is low once the leases hold half the last one or less", () => {
    const book = new LeaseBook(10);
    expect(book.low("u1", T0)).toBe(true);
    book.settled("u1", [], lease(4), T0);
    book.take("u1", T0);
    expect(book.low("u1", T0)).toBe(false);
    book.take("u1", T0);
    expect(book.low("u1", T0)).toBe(true);
  });

  it("takes from the lease that ends first", () => {
    const book = new LeaseBook(10);
    book.settled("u1", [], lease(1, T0 + 900), T0);
    book.settled("u1", [], lease(1, T0 + 300), T0);
    expect(book.take("u1", T0)?.untilMs).toBe(T0 + 300);
  });
});
