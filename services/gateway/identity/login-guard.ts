import { AppError } from "../../../shared/errors/index.js";
import type { JsonBucket } from "../../../shared/nats/index.js";
import type { Clock } from "../../../shared/runtime/index.js";
import type { LoginGuardRecord } from "./records.js";

export interface LoginGuardPolicy {
  /** Failures after which each further try must wait, doubling from one second. */
  slowAfterFailures: number;
  /** Failures after which every try is refused for `lockSeconds`. */
  lockAfterFailures: number;
  lockSeconds: number;
}

/** A counter to check or bump, and the thresholds that apply to it. */
export interface GuardKey {
  key: string;
  policy: LoginGuardPolicy;
}

const MAX_DELAY_MS = 60_000;

/**
 * Slows down and then locks guessing, per account and per client address (see `guardKeys`). An unknown
 * e-mail is counted exactly like a real one, so the guard reveals nothing.
 */
export class LoginGuard {
  constructor(
    private readonly bucket: JsonBucket<typeof LoginGuardRecord>,
    private readonly clock: Clock,
  ) {}

  /** Throws `auth.too_many_attempts` with the wait when any of the keys may not try now. */
  async check(keys: GuardKey[]): Promise<void> {
    const now = this.clock.now();
    const records = await Promise.all(keys.map(({ key }) => this.bucket.get(key)));
    const until = Math.max(
      0,
      ...records.map((entry) => (entry ? Math.max(entry.value.next_try_at, entry.value.locked_until) : 0)),
    );
    if (until > now) {
      throw new AppError("auth.too_many_attempts", "Too many failed attempts; wait before trying again.", {
        retryAfterSeconds: Math.ceil((until - now) / 1000),
      });
    }
  }

  async recordFailure(keys: GuardKey[]): Promise<void> {
    await Promise.all(keys.map((key) => this.recordOne(key)));
  }

  /** A successful sign-in clears the account's counter; address counters decay on their own. */
  async clear({ key }: GuardKey): Promise<void> {
    await this.bucket.delete(key);
  }

  private async recordOne({ key, policy }: GuardKey): Promise<void> {
    // Starts from the stored record, so fields a newer replica wrote stay.
    const next = (record: LoginGuardRecord | null): LoginGuardRecord => {
      const failures = (record?.failures ?? 0) + 1;
      const now = this.clock.now();
      const { slowAfterFailures, lockAfterFailures, lockSeconds } = policy;
      const delay =
        failures >= slowAfterFailures ? Math.min(MAX_DELAY_MS, 1000 * 2 ** (failures - slowAfterFailures)) : 0;
      return {
        ...record,
        failures,
        next_try_at: now + delay,
        locked_until: failures >= lockAfterFailures ? now + lockSeconds * 1000 : 0,
      };
    };
    const updated = await this.bucket.mutate(key, next);
    if (updated) return;
    try {
      await this.bucket.create(key, next(null));
    } catch {
      // Another request created it first: count this failure on top of it.
      await this.bucket.mutate(key, next);
    }
  }
}
