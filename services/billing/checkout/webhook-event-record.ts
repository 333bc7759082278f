import { z } from "zod";
import { kvKey } from "../../../shared/nats/index.js";

/**
 * A provider event billing received, under `webhookEventKey`. Its KV create is what makes
 * a delivery count once: `received` while it is being applied, then its outcome.
 */
export const WebhookEventRecord = z.looseObject({
  provider: z.string(),
  event_id: z.string(),
  type: z.string(),
  status: z.enum(["received", "applied", "ignored"]),
  received_at: z.string(),
  updated_at: z.string(),
});
export type WebhookEventRecord = z.infer<typeof WebhookEventRecord>;

export function webhookEventKey(provider: string, eventId: string): string {
  return kvKey(provider, eventId);
}
