import { describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { systemClock } from "../../../shared/runtime/index.js";
import { openCreditLedger } from "./index.js";

describe("the placeholder ledger", () => {
  it("shows a fresh business its plan's included credit and no usage", async () => {
    const ledger = await openCreditLedger({} as NatsConnection, { replicas: 1, clock: systemClock, logger: pino({ level: "silent" }) });
    const summary = await ledger.summary({ app_id: "app", business_id: "biz_1" }, { start: "2026-11-01T00:00:00.000Z", end: "2026-12-01T00:00:00.000Z", included_credit: 500 });
    expect(summary).toEqual({ balance: 500, used_this_period: 0 });
  });
});
