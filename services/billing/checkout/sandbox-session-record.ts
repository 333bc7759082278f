import { createHash } from "node:crypto";
import { z } from "zod";

/**
 * A sandbox checkout session, stored under `sandboxSessionKey(session id)`: the id is the
 * page's only credential, so only its hash is kept. `open` → `paid` (its one event made)
 * → `completed` (the event applied); or `open` → `canceled`. Past `expires_at` it takes
 * nothing more.
 */
export const SandboxSessionRecord = z.looseObject({
  app_id: z.string(),
  business_id: z.string(),
  plan_id: z.string(),
  success_url: z.string(),
  cancel_url: z.string(),
  state: z.enum(["open", "paid", "completed", "canceled"]),
  created_at: z.string(),
  expires_at: z.string(),
  /** The checkout's one event (JSON), made at the first Pay and sent again, unchanged, if its delivery failed. */
  event_body: z.string().nullable(),
});
export type SandboxSessionRecord = z.infer<typeof SandboxSessionRecord>;

export function sandboxSessionKey(sessionId: string): string {
  return createHash("sha256").update(sessionId).digest("hex");
}
