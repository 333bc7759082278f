import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JOB_PARTITIONS } from "../../../shared/records/index.js";
import {
  assignPartitions,
  type Claim,
  desiredOwner,
  heldBy,
  planOwnership,
  unownedPartitions,
} from "./ownership-plan.js";

const ALL = Array.from({ length: JOB_PARTITIONS }, (_, partition) => partition);

/** Applies a plan's actions to the claims, as the compare-and-sets would when nobody races. */
function apply(self: string, claims: Map<number, Claim>, live: ReadonlySet<string>): Map<number, Claim> {
  const next = new Map(claims);
  for (const action of planOwnership(self, live, claims)) {
    if (action.kind === "release") next.delete(action.partition);
    else next.set(action.partition, { instance: self, revision: (claims.get(action.partition)?.revision ?? 0) + 1 });
  }
  return next;
}

/** Every member applies its plan in turn until nothing changes (or a bound is hit). */
function settle(members: readonly string[], start: Map<number, Claim> = new Map()): Map<number, Claim> {
  const live = new Set(members);
  let claims = start;
  for (let round = 0; round < 10; round += 1) {
    const before = JSON.stringify([...claims]);
    for (const member of members) claims = apply(member, claims, live);
    if (JSON.stringify([...claims]) === before) return claims;
  }
  throw new Error("ownership did not settle");
}

describe("desiredOwner", () => {
  it("is the same whatever the order the members are listed in", () => {
    for (const partition of ALL)
      expect(desiredOwner(partition, ["a", "b", "c"])).toBe(desiredOwner(partition, ["c", "a", "b"]));
  });

  it("moves few partitions besides those of a member that leaves", () => {
    const members = ["3f0c9e2a", "b81d44e0", "0c77aa19", "5d1e7f33"];
    const before = ALL.map((partition) => desiredOwner(partition, members));
    const after = ALL.map((partition) => desiredOwner(partition, members.slice(0, 3)));
    const movedOthers = ALL.filter(
      (partition) => before[partition] !== members[3] && after[partition] !== before[partition],
    );
    expect(movedOthers.length).toBeLessThanOrEqual(Math.ceil(JOB_PARTITIONS / 4));
  });

  it("gives no member more than its even share", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.uuid(), { minLength: 1, maxLength: 8 }), (members) => {
        const counts = new Map<string, number>();
        for (const owner of assignPartitions(members).values()) counts.set(owner, (counts.get(owner) ?? 0) + 1);
        expect(Math.max(...counts.values())).toBeLessThanOrEqual(Math.ceil(JOB_PARTITIONS / members.length));
      }),
    );
  });
});

describe("planOwnership", () => {
  it("gives a lone replica every partition", () => {
    expect(heldBy("a", settle(["a"]))).toEqual(new Set(ALL));
  });

  it("hands a joining replica its share: the holder releases, then the newcomer claims", () => {
    const alone = settle(["a"]);
    const shared = settle(["a", "b"], alone);
    expect(heldBy("a", shared).size + heldBy("b", shared).size).toBe(JOB_PARTITIONS);
    expect(heldBy("b", shared).size).toBeGreaterThan(0);
    for (const partition of heldBy("b", shared)) expect(desiredOwner(partition, ["a", "b"])).toBe("b");
  });

  it("takes over the partitions of a member that is no longer live, by compare-and-set on their revision", () => {
    const claims = settle(["a", "b"]);
    const actions = planOwnership("a", new Set(["a"]), claims);
    const taken = actions.filter((action) => action.kind === "take");
    expect(taken.map((action) => action.partition).sort()).toEqual([...heldBy("b", claims)].sort());
    for (const action of taken) expect(action).toMatchObject({ revision: claims.get(action.partition)!.revision });
  });

  it("never has two members claim one partition, and leaves none unowned once settled", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 4, maxLength: 8 }), {
          minLength: 1,
          maxLength: 6,
        }),
        (members) => {
          const claims = settle(members);
          const live = new Set(members);
          expect(unownedPartitions(live, claims)).toEqual([]);
          const holders = members.map((member) => heldBy(member, claims));
          const total = holders.reduce((sum, held) => sum + held.size, 0);
          expect(total).toBe(JOB_PARTITIONS);
        },
      ),
    );
  });

  it("does not release a partition while no other live member wants it", () => {
    const claims = new Map<number, Claim>([[0, { instance: "a", revision: 3 }]]);
    expect(planOwnership("a", new Set(["a"]), claims).some((action) => action.kind === "release")).toBe(false);
  });
});
