import { CardTable } from "../components/card-table.js";
import { useState } from "preact/hooks";
import {
  CreateWebhookRequest,
  type CreateWebhookResponse,
  WebhookEventFilter,
} from "../../../../shared/contract/index.js";
import { ConfirmButton } from "../components/confirm-button.js";
import { ErrorNote, Problems } from "../components/error-note.js";
import { Link } from "../components/link.js";
import { SecretOnce } from "../components/secret-once.js";
import { problemsOf, when } from "../format.js";
import { navigate } from "../router.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";

/** The business's webhooks: create one (its signing secret is shown once), send a test event, delete; each links to its deliveries. */
export function WebhooksPage() {
  const webhooks = useLoad(() => api().webhooks.list({ limit: 100 }), []);
  const [created, setCreated] = useState<CreateWebhookResponse>();
  const action = useAction(() => webhooks.reload());

  return (
    <main>
      <h1>Webhooks</h1>
      {created ? (
        <SecretOnce
          label={`Signing secret of ${created.webhook.url}`}
          secret={created.secret}
          onDone={() => setCreated(undefined)}
        />
      ) : null}
      <ErrorNote error={webhooks.error ?? action.error} />
      <CardTable
        columns={["URL", "Events", "Created"]}
        actions
        empty={webhooks.data?.items.length === 0 && "No webhooks yet."}
      >
        {webhooks.data?.items.map((webhook) => (
          <tr data-webhook-id={webhook.webhook_id}>
            <td data-label="URL">
              <Link href={`/webhooks/${webhook.webhook_id}`}>{webhook.url}</Link>
              {webhook.description ? <span class="hint"> {webhook.description}</span> : null}
            </td>
            <td data-label="Events">{webhook.events.join(", ")}</td>
            <td data-label="Created">{when(webhook.created_at)}</td>
            <td class="row-actions">
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    await api().webhooks.test(webhook.webhook_id);
                    navigate(`/webhooks/${webhook.webhook_id}`);
                  })
                }
              >
                Send a test
              </button>
              <ConfirmButton
                label="Delete…"
                name={`Delete ${webhook.url}`}
                title={`Delete the webhook ${webhook.url}?`}
                confirm="Delete the webhook"
                disabled={action.busy}
                onConfirm={() => action.act(() => api().webhooks.delete(webhook.webhook_id))}
              >
                <p>No more events are sent to it, deliveries not yet made are dropped, and its delivery log goes.</p>
              </ConfirmButton>
            </td>
          </tr>
        ))}
      </CardTable>
      <CreateWebhookForm
        onCreated={async (answer) => {
          setCreated(answer);
          await webhooks.reload();
        }}
      />
    </main>
  );
}

function CreateWebhookForm(props: { onCreated: (answer: CreateWebhookResponse) => Promise<void> }) {
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<WebhookEventFilter[]>(["job.*"]);
  const [description, setDescription] = useState("");
  const [problems, setProblems] = useState<string[]>([]);
  const action = useAction();
  const toggle = (event: WebhookEventFilter) =>
    setEvents(events.includes(event) ? events.filter((held) => held !== event) : [...events, event]);

  const submit = (event: Event) => {
    event.preventDefault();
    const parsed = CreateWebhookRequest.safeParse({
      url: url.trim(),
      events,
      ...(description.trim() ? { description: description.trim() } : {}),
    });
    if (!parsed.success) {
      setProblems(problemsOf(parsed.error.issues));
      return;
    }
    setProblems([]);
    void action.run(async () => {
      await props.onCreated(await api().webhooks.create(parsed.data));
      setUrl("");
      setDescription("");
    });
  };

  return (
    <form class="stack card" onSubmit={submit} aria-label="Create a webhook">
      <h2>New webhook</h2>
      <label>
        URL
        <input
          name="url"
          type="url"
          required
          placeholder="https://example.com/hooks/jobs"
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </label>
      <fieldset>
        <legend>Events</legend>
        <div class="checks">
          {WebhookEventFilter.options.map((option) => (
            <label class="check">
              <input type="checkbox" checked={events.includes(option)} onChange={() => toggle(option)} />{" "}
              {option === "job.*" ? "every job event" : option}
            </label>
          ))}
        </div>
      </fieldset>
      <label>
        Description (optional)
        <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <p class="hint">
        Each event is POSTed signed with the webhook's secret (shown once, when it is created) and tried again until the
        receiver answers 2xx, for 24 hours.
      </p>
      <Problems problems={problems} />
      <button type="submit" disabled={action.busy}>
        Create webhook
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}
