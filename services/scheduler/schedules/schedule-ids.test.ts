import { describe, expect, it } from "vitest";
import { isId } from "../../../shared/contract/index.js";
import { newJobId } from "../jobs/submit-job.js";
import { newScheduleId, tickJobId, timeOfJobId } from "./schedule-ids.js";

describe("schedule ids", () => {
  it("a new schedule id has the schedule format", () => {
    expect(isId("schedule", newScheduleId(Date.now()))).toBe(true);
  });

  it("a tick's job id is a job id, the same for the same schedule and tick, and another for another", () => {
    const schedule = newScheduleId(Date.now());
    const tick = Date.parse("2026-01-01T00:00:00Z");
    const id = tickJobId(schedule, tick);
    expect(isId("job", id)).toBe(true);
    expect(tickJobId(schedule, tick)).toBe(id);
    expect(tickJobId(schedule, tick + 1000)).not.toBe(id);
    expect(tickJobId(newScheduleId(Date.now()), tick)).not.toBe(id);
  });

  it("a tick's job id sorts by the tick's time, like a job id made then", () => {
    const tick = Date.parse("2026-01-01T00:00:00Z");
    expect(tickJobId("sch_00000000000000000000", tick).slice(0, 12)).toBe(newJobId(tick).slice(0, 12));
    expect(timeOfJobId(tickJobId("sch_00000000000000000000", tick))).toBe(tick);
  });
});
