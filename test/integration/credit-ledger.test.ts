/**
 * The credit ledger on a real nats-server: each effect happens once under concurrency and
 * after a crash between the account's compare-and-set and the copy of its entry.
 */
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUCKETS, decodeJson, encodeJson } from "../../shared/nats/index.js";
import { randomBase62, systemClock } from "../../shared/runtime/index.js";
import {
  openCreditLedger,
  type BillingPeriod,
  type CreditLedger,
  type JobDebit,
} from "../../services/billing/ledger/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";

const PERIOD: BillingPeriod = {
  start: "2026-11-01T00:00:00.000Z",
  end: "2026-12-01T00:00:00.000Z",
  included_credit: 10,
};
const NEXT_PERIOD: BillingPeriod = {
  start: "2026-12-01T00:00:00.000Z",
  end: "2027-01-01T00:00:00.000Z",
  included_credit: 10,
};
const USAGE = {
  wall_seconds: 60,
  cpu: 1,
  memory_mb: 1024,
  gpu: 0,
  plan_id: "free",
  rates: { cpu_core_hour: 1, memory_gb_hour: 0.1, gpu_hour: 20 },
};

let nats: NatsHarness;
let nc: NatsConnection;
let ledger: CreditLedger;

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url, name: "test-ledger" });
  ledger = await openCreditLedger(nc, { replicas: 1, clock: systemClock, logger: pino({ level: "silent" }) });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

function account() {
  return { app_id: "t-ledger", business_id: `biz_${randomBase62(20)}` };
}

function debit(jobNumber: number, micros: number, attempt = 1): JobDebit {
  return { job_id: `job_${String(jobNumber).padStart(20, "0")}`, attempt, charge_micros: micros, usage: USAGE };
}

describe("the credit ledger", () => {
  it("grants a period's included credit once, at its first use, and again in the next period (unused credit carries over)", async () => {
    const owner = account();
    expect(await ledger.summary(owner, PERIOD)).toEqual({ balance: 10, used_this_period: 0, spent_by_key: {} });
    expect(await ledger.summary(owner, PERIOD)).toEqual({ balance: 10, used_this_period: 0, spent_by_key: {} });
    await ledger.debitJob(owner, PERIOD, debit(1, 2_500_000));
    expect(await ledger.summary(owner, PERIOD)).toEqual({ balance: 7.5, used_this_period: 2.5, spent_by_key: {} });
    expect(await ledger.summary(owner, NEXT_PERIOD)).toEqual({ balance: 17.5, used_this_period: 0, spent_by_key: {} });
    const { items } = await ledger.list(owner, NEXT_PERIOD, { limit: 10 });
    expect(items.map((entry) => [entry.entry_id, entry.amount, entry.balance_after])).toEqual([
      [`grant.${Date.parse(NEXT_PERIOD.start)}`, 10, 17.5],
      [`job.${debit(1, 0).job_id}.1`, -2.5, 7.5],
      [`grant.${Date.parse(PERIOD.start)}`, 10, 10],
    ]);
  });

  it("applies the same debit once when it arrives many times at once, and different debits each once", async () => {
    const owner = account();
    const same = await Promise.all(
      Array.from({ length: 12 }, () => ledger.debitJob(owner, PERIOD, debit(7, 1_000_000))),
    );
    expect(same.filter((recorded) => !recorded.duplicate)).toHaveLength(1);
    expect(new Set(same.map((recorded) => recorded.entry.balance_after))).toEqual(new Set([9]));

    await Promise.all(
      Array.from({ length: 8 }, (_, index) => ledger.debitJob(owner, PERIOD, debit(100 + index, 250_000))),
    );
    const { balance, items } = await ledger.list(owner, PERIOD, { limit: 200 });
    expect(balance).toBe(7);
    expect(items.filter((entry) => entry.kind === "debit")).toHaveLength(9);
    expect(items.map((entry) => entry.balance_after)).toEqual(
      [...items.map((entry) => entry.balance_after)].sort((a, b) => a - b),
    );
  });

  it("adds a debit of a key's job to that key's spend of the month once, however often it arrives at once", async () => {
    const owner = account();
    const keyA = `key_${randomBase62(20)}`;
    const keyB = `key_${randomBase62(20)}`;
    await Promise.all(
      Array.from({ length: 10 }, () => ledger.debitJob(owner, PERIOD, { ...debit(1, 1_500_000), key_id: keyA })),
    );
    await Promise.all([
      ledger.debitJob(owner, PERIOD, { ...debit(2, 500_000), key_id: keyA }),
      ledger.debitJob(owner, PERIOD, { ...debit(3, 250_000), key_id: keyB }),
      ledger.debitJob(owner, PERIOD, debit(4, 100_000)),
    ]);
    expect((await ledger.summary(owner, PERIOD)).spent_by_key).toEqual({ [keyA]: 2, [keyB]: 0.25 });
  });

  it("after a crash between the account's change and the copy of its entry, lists the entry and never applies it again", async () => {
    const owner = account();
    await ledger.debitJob(owner, PERIOD, debit(1, 1_000_000));
    // The state a billing replica leaves when it dies right after the compare-and-set: the entry only in `unwritten`.
    const kv = await new Kvm(nc).open(BUCKETS.creditAccounts);
    const key = `${owner.app_id}.${owner.business_id}`;
    const stored = decodeJson((await kv.get(key))!.value) as Record<string, unknown> & {
      balance_micros: number;
      last_seq: number;
      unwritten: unknown[];
    };
    const pending = {
      seq: stored.last_seq + 1,
      entry_id: `job.${debit(2, 0).job_id}.1`,
      kind: "debit",
      amount_micros: -3_000_000,
      balance_after_micros: stored.balance_micros - 3_000_000,
      job_id: debit(2, 0).job_id,
      attempt: 1,
      usage: USAGE,
      created_at: new Date().toISOString(),
    };
    await kv.put(
      key,
      encodeJson({
        ...stored,
        balance_micros: pending.balance_after_micros,
        last_seq: pending.seq,
        unwritten: [pending],
      }),
    );

    const redelivered = await ledger.debitJob(owner, PERIOD, debit(2, 3_000_000));
    expect(redelivered).toMatchObject({ duplicate: true, entry: { entry_id: pending.entry_id, balance_after: 6 } });
    expect(decodeJson((await kv.get(key))!.value)).toMatchObject({ unwritten: [], balance_micros: 6_000_000 });
    expect((await ledger.list(owner, PERIOD, { limit: 10 })).items.map((entry) => entry.entry_id)).toContain(
      pending.entry_id,
    );
    // Copied out now: found through the index from here on.
    expect(await ledger.debitJob(owner, PERIOD, debit(2, 3_000_000))).toMatchObject({ duplicate: true });
    expect((await ledger.summary(owner, PERIOD)).balance).toBe(6);
  });

  it("sets the balance to an exact amount with a set entry that records the difference", async () => {
    const owner = account();
    const set = await ledger.setBalance(owner, PERIOD, 0.5);
    expect(set).toMatchObject({
      duplicate: false,
      previous_balance: 10,
      entry: { kind: "set", amount: -9.5, balance_after: 0.5 },
    });
    await ledger.debitJob(owner, PERIOD, debit(3, 2_000_000));
    expect((await ledger.setBalance(owner, PERIOD, 4)).entry).toMatchObject({ amount: 5.5, balance_after: 4 });
  });

  it("pages newest first with a cursor, each entry once", async () => {
    const owner = account();
    for (let index = 0; index < 5; index += 1) await ledger.debitJob(owner, PERIOD, debit(200 + index, 1));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await ledger.list(owner, PERIOD, { limit: 2, cursor });
      seen.push(...page.items.map((entry) => entry.entry_id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    const all = (await ledger.list(owner, PERIOD, { limit: 200 })).items.map((entry) => entry.entry_id);
    expect(seen).toEqual(all);
    expect(all).toHaveLength(6);
  });
});
