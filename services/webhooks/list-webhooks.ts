import type { z } from "zod";
import type { ListWebhooksCommand, ListWebhooksResponse } from "../../shared/contract/index.js";
import { publicWebhook } from "./records.js";
import { pageAfter } from "./page.js";
import { businessWebhooks, type WebhooksContext } from "./webhooks-context.js";

/** The caller's business's webhooks, oldest first, without secrets. */
export function listWebhooks(ctx: WebhooksContext) {
  return async ({ caller, body }: z.infer<typeof ListWebhooksCommand>): Promise<ListWebhooksResponse> => {
    const records = await businessWebhooks(ctx, caller.app_id, caller.business_id);
    records.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.webhook_id.localeCompare(b.webhook_id));
    const page = pageAfter(records, (record) => record.webhook_id, body.cursor, body.limit);
    return { items: page.items.map(publicWebhook), next_cursor: page.next_cursor };
  };
}
