import { randomInt } from "node:crypto";
import { kvKey, type JsonBucket } from "../../../shared/nats/index.js";
import type { Clock } from "../../../shared/runtime/index.js";
import type { OtpRecord } from "./records.js";
import { digestsEqual, sha256Hex } from "./secrets.js";

export const OTP_TTL_SECONDS = 600;
export const OTP_MAX_TRIES = 5;

/** What a code is for: a sign-in code cannot reset a password, nor a reset code sign in. */
export type OtpPurpose = "sign_in" | "password_reset";

/** The key of a pending code: each purpose keeps its own, so issuing one leaves the other. */
export function otpKey(purpose: OtpPurpose, appId: string, email: string): string {
  const address = email.toLowerCase();
  return purpose === "sign_in" ? kvKey(appId, address) : kvKey(appId, "reset", address);
}

/**
 * Six-digit one-time codes: stored hashed (keyed to the account so a hash alone is useless),
 * single use, expiring after ten minutes, and burnt after five wrong tries.
 */
export class OneTimeCodes {
  constructor(
    private readonly bucket: JsonBucket<typeof OtpRecord>,
    private readonly clock: Clock,
  ) {}

  /** Issues a new code for the key, replacing any pending one. */
  async issue(key: string): Promise<string> {
    const code = String(randomInt(1_000_000)).padStart(6, "0");
    await this.bucket.put(key, {
      code_hash: sha256Hex(`${key}:${code}`),
      expires_at: new Date(this.clock.now() + OTP_TTL_SECONDS * 1000).toISOString(),
      tries_left: OTP_MAX_TRIES,
    });
    return code;
  }

  /** True exactly once for the right code within its lifetime and tries. */
  async consume(key: string, code: string): Promise<boolean> {
    const presented = sha256Hex(`${key}:${code}`);
    let right = false;
    // Right code: burn it. Wrong code: spend a try. Either way by compare-and-set, so two
    // concurrent tries cannot both use the same code or the same try.
    await this.bucket.mutate(key, (value) => {
      right = false;
      if (Date.parse(value.expires_at) <= this.clock.now() || value.tries_left <= 0) return undefined;
      right = digestsEqual(value.code_hash, presented);
      return right ? { ...value, tries_left: 0 } : { ...value, tries_left: value.tries_left - 1 };
    });
    return right;
  }
}
