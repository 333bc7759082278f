import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors/index.js";
import { ManualClock } from "../../../test/harness/manual-clock.js";
import { SpentNodeQuotas } from "./spent-node-quotas.js";

const NOW = Date.parse("2026-03-01T10:20:00.000Z");
const RESETS_AT = "2026-03-01T11:00:00.000Z";
const node = { appId: "acme", authorization: undefined, apiKey: "cjs_node_key_one" };

function quotaExceeded(limit: string, resetsAt = RESETS_AT): AppError {
  return new AppError("logs.quota_exceeded", `over its ${limit}`, {
    details: { limit, max_bytes: 1_000, resets_at: resetsAt },
  });
}

function refusalOf(check: () => void): unknown {
  try {
    check();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("the nodes past their hour", () => {
  it("refuses a node the log relay refused for its hour with the same answer until the hour resets", () => {
    const clock = new ManualClock(NOW);
    const spent = new SpentNodeQuotas(clock);
    spent.remember(node, quotaExceeded("node_hour"));
    const refusal = refusalOf(() => spent.check(node));
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({
      code: "logs.quota_exceeded",
      message: "over its node_hour",
      details: { limit: "node_hour", max_bytes: 1_000, resets_at: RESETS_AT },
    });
    clock.advance(Date.parse(RESETS_AT) - NOW - 1);
    expect(refusalOf(() => spent.check(node))).toBeDefined();
    clock.advance(1);
    expect(refusalOf(() => spent.check(node))).toBeUndefined();
    expect(spent.size).toBe(0);
  });

  it("never refuses another credential, the same key under another app, or a request without one", () => {
    const spent = new SpentNodeQuotas(new ManualClock(NOW));
    spent.remember(node, quotaExceeded("node_hour"));
    expect(refusalOf(() => spent.check({ ...node, apiKey: "cjs_node_key_two" }))).toBeUndefined();
    expect(refusalOf(() => spent.check({ ...node, appId: "other" }))).toBeUndefined();
    expect(refusalOf(() => spent.check({ ...node, authorization: "Bearer x" }))).toBeUndefined();
    expect(
      refusalOf(() => spent.check({ appId: "acme", authorization: undefined, apiKey: undefined })),
    ).toBeUndefined();
  });

  it("remembers only a node's hour: not a business's day, another error, or a reset time that is past or over an hour away", () => {
    const spent = new SpentNodeQuotas(new ManualClock(NOW));
    spent.remember(node, quotaExceeded("business_day"));
    spent.remember(node, new AppError("job.stale_attempt"));
    spent.remember(node, new Error("logs.quota_exceeded"));
    spent.remember(node, quotaExceeded("node_hour", "2026-03-01T10:19:59.000Z"));
    spent.remember(node, quotaExceeded("node_hour", "2026-03-01T11:20:00.001Z"));
    spent.remember(node, quotaExceeded("node_hour", "not a time"));
    expect(spent.size).toBe(0);
    expect(refusalOf(() => spent.check(node))).toBeUndefined();
  });

  it("keeps no credential, only its digest", () => {
    const spent = new SpentNodeQuotas(new ManualClock(NOW));
    spent.remember(node, quotaExceeded("node_hour"));
    expect(JSON.stringify([...(spent as unknown as { refusals: Map<string, unknown> }).refusals])).not.toContain(
      node.apiKey,
    );
  });
});
