import { setTimeout as delay } from "node:timers/promises";
import type { ListLedgerResponse } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { JsonBucket } from "../../../shared/nats/index.js";
import { randomBase62, type Clock, type Logger } from "../../../shared/runtime/index.js";
import type { Account, BillingPeriod, CreditLedger, CreditSummary, JobDebit, RecordedEntry } from "./credit-ledger.js";
import {
  accountKey,
  entriesFilter,
  entryIndexKey,
  entryKey,
  publicEntry,
  type CreditAccountRecord,
  type EntryIndexRecord,
  type StoredEntry,
} from "./credit-records.js";
import { toCredits, toMicros } from "./credit-units.js";
import { addKeySpend, keySpendIn, monthOf } from "./key-spend.js";

const CAS_TRIES = 20;
/** The pause after the n-th lost compare-and-set, up to this, jittered: replicas that collided do not collide again in step. */
const CAS_PAUSE_MAX_MS = 50;

/** One effect on an account: its id (what makes it happen once) and what it adds to the balance. */
interface Change {
  entry_id: string;
  kind: "debit" | "set";
  /** Micro-credits to add, given the balance right before (after any grant of the same write). */
  amount(balanceMicros: number): number;
  job_id: string | null;
  attempt: number | null;
  usage: StoredEntry["usage"];
  key_id: string | null;
}

interface Applied {
  record: CreditAccountRecord;
  /** One per change, in order. */
  results: Array<{ entry: StoredEntry; duplicate: boolean }>;
}

export interface LedgerBuckets {
  accounts: JsonBucket<typeof CreditAccountRecord>;
  entries: JsonBucket<typeof StoredEntry>;
  index: JsonBucket<typeof EntryIndexRecord>;
}

function jobEntryId(jobId: string, attempt: number): string {
  return `job.${jobId}.${attempt}`;
}

function grantId(period: BillingPeriod): string {
  return `grant.${Date.parse(period.start)}`;
}

/** Whether `period` is later than the one the account last granted (the first use of a new period). */
function isNewPeriod(grantedStart: string | null, period: BillingPeriod): boolean {
  return grantedStart === null || Date.parse(period.start) > Date.parse(grantedStart);
}

/** Adds one entry to the record (a pure step of the next value to write); a debit of a key's job adds to that key's spend of the month. */
function append(
  record: CreditAccountRecord,
  entry: Pick<StoredEntry, "entry_id" | "kind" | "amount_micros" | "job_id" | "attempt" | "usage" | "created_at"> & {
    key_id?: string | null;
  },
): StoredEntry {
  const seq = record.last_seq + 1;
  const balance = record.balance_micros + entry.amount_micros;
  const stored: StoredEntry = { ...entry, seq, balance_after_micros: balance };
  record.last_seq = seq;
  record.balance_micros = balance;
  if (entry.kind === "debit") record.period_used_micros -= entry.amount_micros;
  if (entry.kind === "debit" && entry.key_id)
    record.key_spend = addKeySpend(
      record.key_spend,
      monthOf(Date.parse(entry.created_at)),
      entry.key_id,
      -entry.amount_micros,
    );
  record.unwritten = [...record.unwritten, stored];
  return stored;
}

/**
 * The ledger on two KV buckets. The account record is the actor: each effect is one
 * compare-and-set of it, which checks first that the entry id was never applied (in the
 * record's `unwritten`, or indexed in the entries bucket), so a repeat after any crash
 * changes nothing.
 */
export class LedgerStore implements CreditLedger {
  constructor(
    private readonly buckets: LedgerBuckets,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * The balance as applied so far. A read, with no write unless the period's grant is due:
   * the submit's credit check calls it for every job on an operator pool, and must not
   * contend with metering for the account record.
   */
  async summary(account: Account, period: BillingPeriod): Promise<CreditSummary> {
    const record = await this.current(account, period);
    const current = record.period_start === period.start;
    const spent = keySpendIn(record.key_spend, monthOf(this.clock.now()));
    return {
      balance: toCredits(record.balance_micros),
      used_this_period: current ? toCredits(record.period_used_micros) : 0,
      spent_by_key: Object.fromEntries(Object.entries(spent).map(([keyId, micros]) => [keyId, toCredits(micros)])),
    };
  }

  async debitJob(account: Account, period: BillingPeriod, debit: JobDebit): Promise<RecordedEntry> {
    const [entry] = await this.debitJobs(account, period, [debit]);
    return entry!;
  }

  async debitJobs(account: Account, period: BillingPeriod, debits: readonly JobDebit[]): Promise<RecordedEntry[]> {
    for (const debit of debits)
      if (!Number.isInteger(debit.charge_micros) || debit.charge_micros < 0)
        throw new Error(`invalid charge ${debit.charge_micros}`);
    const { results } = await this.apply(
      account,
      period,
      debits.map((debit) => ({
        entry_id: jobEntryId(debit.job_id, debit.attempt),
        kind: "debit",
        amount: () => -debit.charge_micros,
        job_id: debit.job_id,
        attempt: debit.attempt,
        usage: debit.usage,
        key_id: debit.key_id ?? null,
      })),
    );
    return results.map(recorded);
  }

  async hasJobDebit(account: Account, jobId: string, attempt: number): Promise<boolean> {
    const current = await this.buckets.accounts.get(accountKey(account.app_id, account.business_id));
    return current !== null && (await this.findApplied(account, current.value, jobEntryId(jobId, attempt))) !== null;
  }

  async setBalance(account: Account, period: BillingPeriod, credits: number): Promise<RecordedEntry> {
    const target = toMicros(credits);
    const { results } = await this.apply(account, period, [
      {
        entry_id: `set.${randomBase62(16)}`,
        kind: "set",
        amount: (balance) => target - balance,
        job_id: null,
        attempt: null,
        usage: null,
        key_id: null,
      },
    ]);
    return recorded(results[0]);
  }

  async list(
    account: Account,
    period: BillingPeriod,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<ListLedgerResponse> {
    const record = await this.current(account, period);
    const pending = new Map(record.unwritten.map((entry) => [entry.seq, entry]));
    const prefixLength = entriesFilter(account.app_id, account.business_id).length - 1;
    const seqs = new Set(pending.keys());
    for (const key of await this.buckets.entries.keys(entriesFilter(account.app_id, account.business_id)))
      seqs.add(Number(key.slice(prefixLength)));
    const before = page.cursor === undefined ? Number.POSITIVE_INFINITY : Number(page.cursor);
    const ordered = [...seqs].filter((seq) => seq < before).sort((a, b) => b - a);
    const items = [];
    let index = 0;
    for (; index < ordered.length && items.length < page.limit; index += 1) {
      const seq = ordered[index] as number;
      const entry =
        pending.get(seq) ?? (await this.buckets.entries.get(entryKey(account.app_id, account.business_id, seq)))?.value;
      if (entry) items.push(publicEntry(entry));
    }
    return {
      balance: toCredits(record.balance_micros),
      items,
      next_cursor: index < ordered.length ? String(ordered[index - 1]) : null,
    };
  }

  /** The entry already applied under this id, if any. Reads the record's `unwritten` first, then the index. */
  private async findApplied(
    account: Account,
    record: CreditAccountRecord,
    entryId: string,
  ): Promise<StoredEntry | null> {
    const pending = record.unwritten.find((entry) => entry.entry_id === entryId);
    if (pending) return pending;
    const indexed = await this.buckets.index.get(entryIndexKey(account.app_id, account.business_id, entryId));
    if (!indexed) return null;
    const entry = await this.buckets.entries.get(entryKey(account.app_id, account.business_id, indexed.value.seq));
    // The entry is written before its index, so this is never missing unless someone deleted it.
    if (!entry) throw new Error(`ledger entry ${entryId} is indexed as seq ${indexed.value.seq}, which is missing`);
    return entry.value;
  }

  /** The account record as stored, after the period's grant when it is due (the only write a read may make). */
  private async current(account: Account, period: BillingPeriod): Promise<CreditAccountRecord> {
    const stored = await this.buckets.accounts.get(accountKey(account.app_id, account.business_id));
    if (stored && !isNewPeriod(stored.value.period_start, period)) return stored.value;
    return (await this.apply(account, period, [])).record;
  }

  /**
   * Grants the period's included credit if due, then applies each change whose id was not
   * applied before, in order: one compare-and-set of the account for all of them, retried
   * on conflict after a short jittered pause. The checks happen after the read they depend
   * on, so a write by anyone in between fails the CAS and they are made again. Metering
   * passes many charges of one account at once, so a busy account takes one write per batch.
   */
  private async apply(account: Account, period: BillingPeriod, changes: readonly Change[]): Promise<Applied> {
    const key = accountKey(account.app_id, account.business_id);
    for (let tryNumber = 0; tryNumber < CAS_TRIES; tryNumber += 1) {
      if (tryNumber > 0) await delay(Math.round(Math.random() * Math.min(CAS_PAUSE_MAX_MS, tryNumber * 5)));
      const current = await this.buckets.accounts.get(key);
      const now = new Date(this.clock.now()).toISOString();
      const record: CreditAccountRecord = current
        ? { ...current.value }
        : {
            ...account,
            balance_micros: 0,
            period_start: null,
            period_used_micros: 0,
            last_seq: 0,
            unwritten: [],
            created_at: now,
            updated_at: now,
          };
      let changed = current === null;

      if (isNewPeriod(record.period_start, period)) {
        const id = grantId(period);
        const amount = toMicros(period.included_credit);
        record.period_start = period.start;
        record.period_used_micros = 0;
        if (amount > 0 && !(await this.findApplied(account, record, id))) {
          append(record, {
            entry_id: id,
            kind: "grant",
            amount_micros: amount,
            job_id: null,
            attempt: null,
            usage: null,
            created_at: now,
          });
        }
        changed = true;
      }

      const results: Applied["results"] = [];
      // Read after the record (see findApplied), all at once.
      const existing = await Promise.all(changes.map((change) => this.findApplied(account, record, change.entry_id)));
      const appliedNow = new Map<string, StoredEntry>();
      changes.forEach((change, index) => {
        const earlier = existing[index] ?? appliedNow.get(change.entry_id);
        if (earlier) {
          results.push({ entry: earlier, duplicate: true });
          return;
        }
        const entry = append(record, {
          entry_id: change.entry_id,
          kind: change.kind,
          amount_micros: change.amount(record.balance_micros),
          job_id: change.job_id,
          attempt: change.attempt,
          usage: change.usage,
          ...(change.key_id === null ? {} : { key_id: change.key_id }),
          created_at: now,
        });
        appliedNow.set(change.entry_id, entry);
        results.push({ entry, duplicate: false });
        changed = true;
      });
      if (changed) {
        record.updated_at = now;
        const written = current
          ? await this.buckets.accounts.update(key, record, current.revision)
          : await this.createAccount(key, record);
        if (written === null) continue;
      }
      // Also entries a replica left unwritten when it died after its compare-and-set.
      if (record.unwritten.length > 0) {
        await this.writeOut(account).catch((error: unknown) =>
          this.logger.warn({ err: error, account: key }, "ledger entries not written out yet; the next use retries"),
        );
      }
      return { record, results };
    }
    throw new AppError("service.unavailable", "The credit account is too busy to change right now; try again.", {
      retryAfterSeconds: 1,
    });
  }

  private async createAccount(key: string, record: CreditAccountRecord): Promise<number | null> {
    try {
      return await this.buckets.accounts.create(key, record);
    } catch (error) {
      if (error instanceof AppError && error.code === "resource.already_exists") return null;
      throw error;
    }
  }

  /** Copies the account's unwritten entries to the entries bucket (entry, then index), then drops them from the record. */
  private async writeOut(account: Account): Promise<void> {
    const key = accountKey(account.app_id, account.business_id);
    const current = await this.buckets.accounts.get(key);
    if (!current || current.value.unwritten.length === 0) return;
    const written = new Set<number>();
    // Each entry before its index (a repeat finds the index only once the entry is there); entries side by side.
    await Promise.all(
      current.value.unwritten.map(async (entry) => {
        await this.buckets.entries.put(entryKey(account.app_id, account.business_id, entry.seq), entry);
        await this.buckets.index.put(entryIndexKey(account.app_id, account.business_id, entry.entry_id), {
          seq: entry.seq,
        } satisfies EntryIndexRecord);
        written.add(entry.seq);
      }),
    );
    await this.buckets.accounts.mutate(key, (record) => {
      const remaining = record.unwritten.filter((entry) => !written.has(entry.seq));
      return remaining.length === record.unwritten.length ? undefined : { ...record, unwritten: remaining };
    });
  }
}

function recorded(result: Applied["results"][number] | undefined): RecordedEntry {
  if (!result) throw new Error("a ledger change returned no entry");
  const { entry, duplicate } = result;
  return {
    entry: publicEntry(entry),
    duplicate,
    previous_balance: toCredits(entry.balance_after_micros - entry.amount_micros),
  };
}
