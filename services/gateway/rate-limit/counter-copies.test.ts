import { describe, expect, it } from "vitest";
import { CounterCopies } from "./counter-copies.js";

describe("CounterCopies", () => {
  it("starts a key from the record last stored for it", () => {
    const copies = new CounterCopies<number>({ max: 10, sharedForMs: 1000 });
    expect(copies.startFrom("a", 0)).toBeUndefined();
    copies.stored("a", { value: 3, revision: 7 }, false, 0);
    expect(copies.startFrom("a", 1)).toEqual({ value: 3, revision: 7 });
  });

  it("reads a key first for a while once its copy lost to another replica's write, then uses copies again", () => {
    const copies = new CounterCopies<number>({ max: 10, sharedForMs: 1000 });
    copies.stored("a", { value: 4, revision: 9 }, true, 100);
    expect(copies.startFrom("a", 1099)).toBeUndefined();
    expect(copies.startFrom("a", 1100)).toEqual({ value: 4, revision: 9 });
  });

  it("forgets everything rather than grow past its bound", () => {
    const copies = new CounterCopies<number>({ max: 2, sharedForMs: 1000 });
    copies.stored("a", { value: 1, revision: 1 }, false, 0);
    copies.stored("b", { value: 1, revision: 2 }, false, 0);
    copies.stored("c", { value: 1, revision: 3 }, false, 0);
    expect([copies.startFrom("a", 0), copies.startFrom("c", 0)]).toEqual([undefined, { value: 1, revision: 3 }]);
  });
});
