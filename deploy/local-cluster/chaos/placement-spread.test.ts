import { describe, expect, it } from "vitest";
import { PlacementSpread, placementsIn } from "./placement-spread.js";

describe("the soak's placement spread", () => {
  it("adds each replica's placements across a restart, which starts its counter again", () => {
    const spread = new PlacementSpread();
    spread.record("scheduler-1", 10);
    spread.record("scheduler-2", 4);
    spread.record("scheduler-1", 25);
    spread.record("scheduler-1", undefined);
    spread.record("scheduler-1", 3);
    spread.record("scheduler-1", 7);
    spread.record("scheduler-2", 4);
    expect(Object.fromEntries(spread.placed)).toEqual({ "scheduler-1": 22, "scheduler-2": 0 });
    expect(spread.idle()).toEqual(["scheduler-2"]);
  });

  it("reads the counter from a Prometheus exposition", () => {
    const text = "# HELP cjs_scheduler_placements_total x\ncjs_scheduler_placements_total 42\nother_total 1\n";
    expect(placementsIn(text)).toBe(42);
    expect(placementsIn("other_total 1\n")).toBeUndefined();
  });
});
