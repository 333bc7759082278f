import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { JsonBucket } from "../../../shared/nats/index.js";
import type { Clock } from "../../../shared/runtime/index.js";

/** A secret billing owns, shared by every replica through KV. */
export const BillingSecretRecord = z.object({ secret: z.string(), created_at: z.string() });
export type BillingSecretRecord = z.infer<typeof BillingSecretRecord>;

/** The key of the sandbox provider's webhook signing secret. */
export const SANDBOX_WEBHOOK_SECRET_KEY = "sandbox-webhook";

/** The secret under `name`, created (32 random bytes) by whichever replica asks first. */
export async function loadBillingSecret(
  bucket: JsonBucket<typeof BillingSecretRecord>,
  name: string,
  clock: Clock,
): Promise<Buffer> {
  let record = (await bucket.get(name))?.value;
  if (!record) {
    const fresh = { secret: randomBytes(32).toString("base64url"), created_at: new Date(clock.now()).toISOString() };
    try {
      await bucket.create(name, fresh);
      record = fresh;
    } catch {
      // Another replica made it first.
      record = (await bucket.get(name))?.value;
    }
    if (!record) throw new Error(`billing secret ${name} could not be created or read`);
  }
  return Buffer.from(record.secret, "base64url");
}
