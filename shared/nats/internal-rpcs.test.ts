import { describe, expect, it } from "vitest";
import { AppError } from "../errors/index.js";
import { INTERNAL_RPCS, type InternalRpcName, rpcSubject } from "./internal-rpcs.js";

const NAMES = Object.keys(INTERNAL_RPCS) as InternalRpcName[];
const PER_REPLICA = NAMES.filter((name) => INTERNAL_RPCS[name].subject.length > 0);

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

  it("names the replica in the subject of an RPC one replica answers, and refuses to ask one unnamed", () => {
    expect(PER_REPLICA.sort()).toEqual(["concurrencyInUse", "jobListShard"]);
    expect(rpcSubject("jobListShard", "replica-1")).toBe("cjs.scheduler.replica.replica-1.jobs.list");
    expect(() => rpcSubject("jobListShard")).toThrow(AppError);
  });
});
