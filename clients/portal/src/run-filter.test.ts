import { describe, expect, it } from "vitest";
import { filterFromSearch, isFiltered, listRequestOf, NO_FILTER, searchOf } from "./run-filter.js";

describe("the runs list's filter in the address", () => {
  it("goes to the address and back unchanged, repeated filters included", () => {
    const filter = {
      ...NO_FILTER,
      states: ["failed" as const, "timed_out" as const],
      pool: "gpu",
      name: "nightly",
      metadata: ["team=data", "url=a=b"],
      after: "2026-11-13T00:00:00.000Z",
      schedule: "sch_0VbeygdjkkWnwRC9cwe1",
      cursor: "c1",
    };
    const search = searchOf(filter);
    expect(search).toBe(
      "?state=failed&state=timed_out&pool=gpu&name=nightly&after=2026-11-13T00%3A00%3A00.000Z&schedule=sch_0VbeygdjkkWnwRC9cwe1&metadata=team%3Ddata&metadata=url%3Da%3Db&cursor=c1",
    );
    expect(filterFromSearch(new URLSearchParams(search))).toEqual(filter);
  });

  it("is empty for no filter, and a page alone is no filter", () => {
    expect(searchOf(NO_FILTER)).toBe("");
    expect(isFiltered({ ...NO_FILTER, cursor: "c1" })).toBe(false);
    expect(isFiltered({ ...NO_FILTER, node: "nod_x" })).toBe(true);
  });

  it("makes the jobs/list request of the filter: one state as a string, several as a list", () => {
    expect(listRequestOf({ ...NO_FILTER, states: ["failed"], schedule: "sch_x", before: "b" }, 25)).toEqual({
      limit: 25,
      state: "failed",
      schedule_id: "sch_x",
      created_before: "b",
    });
    expect(listRequestOf({ ...NO_FILTER, states: ["failed", "cancelled"], metadata: ["a=1"] }, 50)).toEqual({
      limit: 50,
      state: ["failed", "cancelled"],
      metadata: ["a=1"],
    });
  });
});
