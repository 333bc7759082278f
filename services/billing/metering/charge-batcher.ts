import type { JobRecord } from "../../../shared/records/index.js";
import type { CreditContext } from "../credit/credit-context.js";
import type { RecordedEntry } from "../ledger/index.js";
import type { ChargedEnd } from "./charge.js";
import { jobDebit } from "./debit-attempt.js";

/**
 * Charges one write of an account takes at most: the record carries its new entries until
 * they are written out, so this bounds its size (about 500 bytes an entry).
 */
const BATCH_MAX = 100;

interface PendingCharge {
  job: JobRecord;
  attempt: number;
  end: ChargedEnd;
  resolve(entry: RecordedEntry | null): void;
  reject(error: unknown): void;
}

/**
 * Charges ended attempts account by account, many at a time: while one write of an
 * account's record is under way, the charges of that account that arrive wait, and the
 * next write applies them all (up to BATCH_MAX), reading the plan once for them. One
 * business ending hundreds of attempts a second so costs its record a few writes a second,
 * not hundreds that collide; other accounts are charged alongside. Each charge resolves
 * with its entry (null for the operator's own business, which is not billed); a failed
 * write fails its batch, whose messages are redelivered.
 */
export class ChargeBatcher {
  private readonly waiting = new Map<string, PendingCharge[]>();

  constructor(private readonly ctx: CreditContext) {}

  charge(job: JobRecord, attempt: number, end: ChargedEnd): Promise<RecordedEntry | null> {
    return new Promise((resolve, reject) => {
      const key = `${job.app_id}/${job.business_id}`;
      const queue = this.waiting.get(key);
      const pending = { job, attempt, end, resolve, reject };
      if (queue) {
        queue.push(pending);
        return;
      }
      this.waiting.set(key, [pending]);
      void this.serve(key);
    });
  }

  /** Writes the account's waiting charges, one batch after another, until none is left. */
  private async serve(key: string): Promise<void> {
    for (let queue = this.waiting.get(key) ?? []; queue.length > 0; queue = this.waiting.get(key) ?? []) {
      const batch = queue.splice(0, BATCH_MAX);
      try {
        const entries = await this.write(batch);
        batch.forEach((pending, index) => pending.resolve(entries?.[index] ?? null));
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.waiting.delete(key);
  }

  /** One write of the account's record for the batch, at its plan's rates now; null for the operator's own business. */
  private async write(batch: readonly PendingCharge[]): Promise<RecordedEntry[] | null> {
    const { job: first } = batch[0]!;
    const account = { app_id: first.app_id, business_id: first.business_id };
    if (await this.ctx.isOperatorAccount(account)) return null;
    const { plan, period } = await this.ctx.planOf(account);
    const debits = batch.map(({ job, attempt, end }) => jobDebit(job, attempt, end, plan));
    return this.ctx.ledger.debitJobs(account, period, debits);
  }
}
