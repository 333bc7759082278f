import { describe, expect, it } from "vitest";
import { RPC_ROUTES } from "../../../shared/contract/index.js";
import { isAppError } from "../../../shared/errors/index.js";
import { NodeCallBudget, nodeCallClass } from "./node-calls.js";

function refusalOf(admit: () => void) {
  try {
    admit();
  } catch (error) {
    if (isAppError(error)) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("a node's call budget", () => {
  it("sorts the node plane's calls: polls, results and log pushes follow jobs; heartbeats, drains and rotations do not", () => {
    expect([RPC_ROUTES.poll, RPC_ROUTES.result, RPC_ROUTES.pushLogs].map(nodeCallClass)).toEqual([
      "jobs",
      "jobs",
      "jobs",
    ]);
    expect([RPC_ROUTES.heartbeat, RPC_ROUTES.drainNode, RPC_ROUTES.rotateNodeKey].map(nodeCallClass)).toEqual([
      "control",
      "control",
      "control",
    ]);
  });

  it("admits a second's worth of control calls at once, refuses the next with its wait, and admits again after it", () => {
    let now = 1_000_000;
    const budget = new NodeCallBudget({ perSecond: 100, controlPerSecond: 2 }, () => now);
    budget.admit("node-a", RPC_ROUTES.heartbeat);
    budget.admit("node-a", RPC_ROUTES.heartbeat);
    const refusal = refusalOf(() => budget.admit("node-a", RPC_ROUTES.heartbeat));
    expect(refusal.code).toBe("rate.limited");
    expect(refusal.retryAfterSeconds).toBe(1);
    expect(refusal.details).toEqual({ window: "second", limit: 2, budget: "node_control" });
    // Another node's budget is its own, and the same node's polls are not control calls.
    budget.admit("node-b", RPC_ROUTES.heartbeat);
    budget.admit("node-a", RPC_ROUTES.poll);
    now += 500;
    budget.admit("node-a", RPC_ROUTES.heartbeat);
    expect(() => budget.admit("node-a", RPC_ROUTES.heartbeat)).toThrow(
      /2 heartbeats, drains and key rotations a second/,
    );
  });

  it("counts every call against the node's whole budget, and a refused call takes nothing from either", () => {
    let now = 0;
    const budget = new NodeCallBudget({ perSecond: 3, controlPerSecond: 3 }, () => now);
    budget.admit("node-a", RPC_ROUTES.poll);
    budget.admit("node-a", RPC_ROUTES.result);
    budget.admit("node-a", RPC_ROUTES.heartbeat);
    const refusal = refusalOf(() => budget.admit("node-a", RPC_ROUTES.heartbeat));
    expect(refusal.details).toEqual({ window: "second", limit: 3, budget: "node" });
    // A third of a second refills one call: the heartbeat goes, since the refused one took no control call.
    now += 334;
    budget.admit("node-a", RPC_ROUTES.heartbeat);
    expect(() => budget.admit("node-a", RPC_ROUTES.pushLogs)).toThrow(/3 calls a second for this node/);
  });
});
