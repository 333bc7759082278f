import { CardTable } from "../components/card-table.js";
import { useState } from "preact/hooks";
import type { Delivery } from "../../../../shared/contract/index.js";
import { ErrorNote } from "../components/error-note.js";
import { StateBadge } from "../components/state-badge.js";
import { when } from "../format.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";

const POLL_MS = 3000;

/** The last try's answer: its status code, or why there was none. */
function lastAnswer(delivery: Delivery): string {
  const last = delivery.attempts.at(-1);
  if (last === undefined) return "not tried yet";
  return last.status_code === null ? (last.error ?? "no answer") : `HTTP ${last.status_code}`;
}

/** How many tries a delivery had, opening to each one's time, answer and duration. */
function Tries(props: { delivery: Delivery }) {
  return (
    <details>
      <summary>{props.delivery.attempts.length}</summary>
      <ol class="tries">
        {props.delivery.attempts.map((attempt) => (
          <li>
            {when(attempt.at)}: {attempt.status_code === null ? attempt.error : `HTTP ${attempt.status_code}`} in{" "}
            {attempt.duration_ms} ms
          </li>
        ))}
      </ol>
    </details>
  );
}

/**
 * One webhook's delivery log (the last 7 days, newest first, read again every 3 s): each
 * event's state, every try with its status code or error, the next try; a test event; and
 * a delivery that ended sent again now.
 */
export function WebhookPage(props: { webhookId: string }) {
  const [cursor, setCursor] = useState<string>();
  const deliveries = useLoad(
    () => api().webhooks.deliveries({ webhook_id: props.webhookId, limit: 50, ...(cursor ? { cursor } : {}) }),
    [props.webhookId, cursor],
    { pollMs: POLL_MS },
  );
  const webhooks = useLoad(() => api().webhooks.list({ limit: 100 }), []);
  const webhook = webhooks.data?.items.find((item) => item.webhook_id === props.webhookId);
  const action = useAction(() => deliveries.reload());

  return (
    <main>
      <h1>Deliveries</h1>
      <p>
        {webhook ? (
          <>
            To <code>{webhook.url}</code> ({webhook.events.join(", ")})
          </>
        ) : (
          <code>{props.webhookId}</code>
        )}
      </p>
      <div class="actions page-actions">
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            action.act(async () => {
              setCursor(undefined);
              await api().webhooks.test(props.webhookId);
            })
          }
        >
          Send a test
        </button>
      </div>
      <ErrorNote error={deliveries.error ?? action.error} />
      <CardTable
        columns={["Event", "When", "State", "Last answer", "Tries", "Next try"]}
        actions
        empty={deliveries.data?.items.length === 0 && "No deliveries in the last 7 days."}
      >
        {deliveries.data?.items.map((delivery) => (
          <tr data-delivery-id={delivery.delivery_id}>
            <td data-label="Event">{delivery.event_type}</td>
            <td data-label="When">{when(delivery.created_at)}</td>
            <td data-label="State">
              <StateBadge state={delivery.state} />
            </td>
            <td data-label="Last answer" data-testid="last-answer">
              {lastAnswer(delivery)}
            </td>
            <td data-label="Tries">
              <Tries delivery={delivery} />
            </td>
            <td data-label="Next try">{delivery.next_attempt_at ? when(delivery.next_attempt_at) : "—"}</td>
            <td class="row-actions">
              {delivery.state === "pending" ? null : (
                <button
                  type="button"
                  class="secondary"
                  disabled={action.busy}
                  aria-label={`Send ${delivery.event_type} of ${when(delivery.created_at)} again`}
                  onClick={() =>
                    action.act(() =>
                      api().call("retryWebhookDelivery", {
                        webhook_id: props.webhookId,
                        delivery_id: delivery.delivery_id,
                      }),
                    )
                  }
                >
                  Send again
                </button>
              )}
            </td>
          </tr>
        ))}
      </CardTable>
      <nav class="pager" aria-label="Pages">
        {cursor ? (
          <button type="button" class="secondary" onClick={() => setCursor(undefined)}>
            Newest
          </button>
        ) : null}
        {deliveries.data?.next_cursor ? (
          <button type="button" class="secondary" onClick={() => setCursor(deliveries.data!.next_cursor!)}>
            Older
          </button>
        ) : null}
      </nav>
    </main>
  );
}
