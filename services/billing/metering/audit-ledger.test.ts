import type { JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";
import { describe, expect, it, vi, type Mock } from "vitest";
import type { JobEvent } from "../../../shared/contract/index.js";
import { encodeJson } from "../../../shared/nats/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import { queuedJobRecord } from "../../../test/harness/job-records.js";
import { createLogger, metricsRegistry } from "../../../shared/runtime/index.js";
import type { AccountPlan } from "../credit/account-plan.js";
import type { CreditContext } from "../credit/credit-context.js";
import type { CreditLedger, RecordedEntry } from "../ledger/index.js";
import { auditRevision } from "./audit-ledger.js";

const GRACE_MS = 60_000;
const ENDED_AT = Date.parse("2026-11-22T10:01:32.000Z");
const RATES = { cpu_core_hour: 1, memory_gb_hour: 0.1, gpu_hour: 20 };
const PERIOD = { start: "2026-11-01T00:00:00.000Z", end: "2026-12-01T00:00:00.000Z", included_credit: 10 };

function event(at: string, state: JobEvent["state"], attempt: number, reason: string): JobEvent {
  return { at: `2026-11-22T10:${at}.000Z`, state, attempt, reason, node_id: state === "queued" ? null : "nod_1" };
}

const SUCCEEDED: JobEvent[] = [
  event("00:00", "queued", 0, "submitted"),
  event("00:01", "assigned", 1, "assigned"),
  event("00:02", "running", 1, "started"),
  event("01:32", "succeeded", 1, "exited"),
];

/** A job that succeeded on its first attempt on the operator pool `default`, 90 s of run. */
function record(overrides: Partial<JobRecord> = {}): JobRecord {
  return queuedJobRecord({
    job_id: "job_000000000000000000A1",
    app_id: "app",
    business_id: "biz_1",
    user_id: "usr_1",
    resources: { cpu: 1, memory_mb: 1024, gpu: 0 },
    timeout_seconds: 600,
    max_attempts: 1,
    state: "succeeded",
    attempt: 1,
    node_id: "nod_1",
    exit_code: 0,
    pending_reason: null,
    created_at: "2026-11-22T10:00:00.000Z",
    queued_at: "2026-11-22T10:00:00.000Z",
    started_at: "2026-11-22T10:00:02.000Z",
    finished_at: "2026-11-22T10:01:32.000Z",
    updated_at: "2026-11-22T10:01:32.000Z",
    timeline: SUCCEEDED,
    pool_key: "op.default",
    ...overrides,
  });
}

type FakeMsg = JsMsg & { ack: Mock; nak: Mock };

/** A revision of `job`, or a delete marker (a header, no body) when null. */
function message(job: JobRecord | null): FakeMsg {
  const marker = headers();
  marker.set("KV-Operation", "DEL");
  const body = job ? { data: encodeJson(job) } : { data: new Uint8Array(), headers: marker };
  return {
    seq: 1,
    subject: "$KV.cjs_jobs.app.biz_1.job_1",
    ...body,
    ack: vi.fn(),
    nak: vi.fn(),
    term: vi.fn(),
  } as unknown as FakeMsg;
}

/** A context whose ledger and metering stream the test sets, at `now`. */
function audit(options: { now: number; debited?: boolean; meteringHolds?: boolean }) {
  const debitJob = vi.fn(
    async (): Promise<RecordedEntry> => ({
      entry: { amount: -0.1 } as RecordedEntry["entry"],
      duplicate: false,
      previous_balance: 10,
    }),
  );
  const ledger = { hasJobDebit: vi.fn(async () => options.debited ?? false), debitJob } as unknown as CreditLedger;
  const ctx = {
    logger: createLogger({ service: "test", level: "silent" }),
    clock: { now: () => options.now },
    ledger,
    planOf: async () => ({ plan: { id: "free", rates: RATES }, period: PERIOD }) as unknown as AccountPlan,
    // A customer's business: the operator's own is never charged (operator-not-billed.test.ts).
    isOperatorAccount: async () => false,
  } as unknown as CreditContext;
  const jsm = {
    streams: { getMessage: vi.fn(async () => (options.meteringHolds ? {} : null)) },
  } as unknown as JetStreamManager;
  return { run: (msg: JsMsg) => auditRevision(ctx, jsm, GRACE_MS, msg), debitJob, jsm };
}

async function repairs(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("cjs_billing_ledger_repairs_total")?.get();
  return (metric?.values ?? []).reduce((total, sample) => total + sample.value, 0);
}

describe("auditRevision", () => {
  it("acknowledges a delete marker and a revision with nothing to charge at once", async () => {
    const { run, debitJob } = audit({ now: ENDED_AT + GRACE_MS });
    const marker = message(null);
    await run(marker);
    const selfHosted = message(record({ pool_key: "sh.biz_1.mine" }));
    await run(selfHosted);
    const running = message(record({ state: "running", timeline: SUCCEEDED.slice(0, 3) }));
    await run(running);
    for (const msg of [marker, selfHosted, running]) expect(msg.ack).toHaveBeenCalledOnce();
    expect(debitJob).not.toHaveBeenCalled();
  });

  it("holds back an end younger than the grace for the time it has left, without reading the ledger", async () => {
    const { run, debitJob } = audit({ now: ENDED_AT + 15_000 });
    const msg = message(record());
    await run(msg);
    expect(msg.nak).toHaveBeenCalledWith(GRACE_MS - 15_000);
    expect(msg.ack).not.toHaveBeenCalled();
    expect(debitJob).not.toHaveBeenCalled();
  });

  it("leaves an attempt the ledger has debited as it is", async () => {
    const { run, debitJob } = audit({ now: ENDED_AT + GRACE_MS, debited: true });
    const msg = message(record());
    await run(msg);
    expect(msg.ack).toHaveBeenCalledOnce();
    expect(debitJob).not.toHaveBeenCalled();
  });

  it("waits a grace more while metering still holds a message of the job", async () => {
    const { run, debitJob } = audit({ now: ENDED_AT + GRACE_MS, meteringHolds: true });
    const msg = message(record());
    await run(msg);
    expect(msg.nak).toHaveBeenCalledWith(GRACE_MS);
    expect(debitJob).not.toHaveBeenCalled();
  });

  it("debits a missing attempt with the same charge as metering, counts the repair, then acknowledges", async () => {
    const { run, debitJob } = audit({ now: ENDED_AT + GRACE_MS });
    const before = await repairs();
    const msg = message(record());
    await run(msg);
    expect(debitJob).toHaveBeenCalledWith({ app_id: "app", business_id: "biz_1" }, PERIOD, {
      job_id: "job_000000000000000000A1",
      attempt: 1,
      charge_micros: 27_500,
      usage: { wall_seconds: 90, cpu: 1, memory_mb: 1024, gpu: 0, plan_id: "free", rates: RATES },
      key_id: null,
    });
    expect(msg.ack).toHaveBeenCalledOnce();
    expect((await repairs()) - before).toBe(1);
  });

  it("does not acknowledge a revision whose debit failed, so it comes back", async () => {
    const { run, debitJob } = audit({ now: ENDED_AT + GRACE_MS });
    debitJob.mockRejectedValueOnce(new Error("NATS went away"));
    const msg = message(record());
    await expect(run(msg)).rejects.toThrow("NATS went away");
    expect(msg.ack).not.toHaveBeenCalled();
  });
});
