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

  it("remembers a node's hour only: not a business's day unless told the node runs only its business's jobs, another error, or a reset time that is past or over an hour away", () => {
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

  it("remembers a business's day for a node that runs only its own business's jobs, until the day resets, never past a day away", () => {
    const clock = new ManualClock(NOW);
    const spent = new SpentNodeQuotas(clock);
    const dayEnds = "2026-03-02T00:00:00.000Z";
    spent.remember(node, quotaExceeded("business_day", "2026-03-02T10:20:00.001Z"), true);
    expect(spent.size).toBe(0);
    spent.remember(node, quotaExceeded("business_day", dayEnds), true);
    expect(refusalOf(() => spent.check(node))).toMatchObject({ details: { limit: "business_day" } });
    clock.advance(Date.parse(dayEnds) - NOW);
    expect(refusalOf(() => spent.check(node))).toBeUndefined();
  });

  it("through the push handler, asks whether the node's business runs only its own jobs, and only for a business's day", async () => {
    const asked: string[] = [];
    const spent = new SpentNodeQuotas(new ManualClock(NOW), async (businessId) => {
      asked.push(businessId);
      return businessId === "biz_own";
    });
    const refusing = (error: AppError) =>
      spent.remembering(async () => {
        throw error;
      });
    const context = (businessId: string, apiKey: string) =>
      ({
        caller: { business_id: businessId },
        requestHeader: (name: string) => ({ "x-app-id": "acme", "x-api-key": apiKey })[name],
      }) as unknown as Parameters<ReturnType<typeof refusing>>[1];
    const body = {} as Parameters<ReturnType<typeof refusing>>[0];
    const day = quotaExceeded("business_day", "2026-03-02T00:00:00.000Z");
    await expect(refusing(day)(body, context("biz_own", "key_own"))).rejects.toBe(day);
    await expect(refusing(day)(body, context("biz_operator", "key_operator"))).rejects.toBe(day);
    await expect(refusing(new AppError("job.stale_attempt"))(body, context("biz_own", "key_other"))).rejects.toThrow();
    expect(asked).toEqual(["biz_own", "biz_operator"]);
    expect(refusalOf(() => spent.check({ appId: "acme", authorization: undefined, apiKey: "key_own" }))).toBeDefined();
    expect(
      refusalOf(() => spent.check({ appId: "acme", authorization: undefined, apiKey: "key_operator" })),
    ).toBeUndefined();
  });

  it("keeps no credential, only its digest", () => {
    const spent = new SpentNodeQuotas(new ManualClock(NOW));
    spent.remember(node, quotaExceeded("node_hour"));
    expect(JSON.stringify([...(spent as unknown as { refusals: Map<string, unknown> }).refusals])).not.toContain(
      node.apiKey,
    );
  });
});
