import { describe, expect, it } from "vitest";
import { AppError } from "../errors/index.js";
import { INTERNAL_RPCS, type InternalRpcName, rpcSubject, rpcSubjectLabel } from "./internal-rpcs.js";

const NAMES = Object.keys(INTERNAL_RPCS) as InternalRpcName[];
const ADDRESSED = NAMES.filter((name) => INTERNAL_RPCS[name].subject.length > 0);

describe("INTERNAL_RPCS", () => {
  it("asks each RPC on a subject of its own, but the dry run, which is a submit", () => {
    const bySubject = new Map<string, InternalRpcName[]>();
    for (const name of NAMES) {
      const subject = rpcSubject(name, "replica-1");
      bySubject.set(subject, [...(bySubject.get(subject) ?? []), name]);
    }
    const shared = [...bySubject.values()].filter((names) => names.length > 1);
    expect(shared).toEqual([["jobSubmit", "jobDryRun"]]);
    expect(rpcSubject("jobSubmit")).toBe("cjs.scheduler.jobs.submit");
  });

  it("names the replica or the partition in the subject of an addressed RPC, and refuses to ask one unaddressed", () => {
    expect(ADDRESSED.sort()).toEqual([
      "concurrencyInUse",
      "jobListShard",
      "nodeDeliveredOfPartition",
      "nodeResultOfPartition",
    ]);
    expect(rpcSubject("jobListShard", "replica-1")).toBe("cjs.scheduler.replica.replica-1.jobs.list");
    expect(rpcSubject("nodeResultOfPartition", "07")).toBe("cjs.scheduler.partition.07.nodes.result");
    expect(() => rpcSubject("jobListShard")).toThrow(AppError);
    expect(() => rpcSubject("nodeResultOfPartition")).toThrow(AppError);
  });

  it("labels an addressed RPC's metrics with its address as *, one series for every replica or partition", () => {
    expect(rpcSubjectLabel("nodeResultOfPartition", "07")).toBe("cjs.scheduler.partition.*.nodes.result");
    expect(rpcSubjectLabel("jobListShard", "replica-1")).toBe("cjs.scheduler.replica.*.jobs.list");
    expect(rpcSubjectLabel("nodeResult")).toBe("cjs.scheduler.nodes.result");
  });
});
