import { CardTable } from "../components/card-table.js";
import { useState } from "preact/hooks";
import { useIsAdmin } from "../admin.js";
import { saveExport } from "../components/download.js";
import { ErrorNote } from "../components/error-note.js";
import { Link } from "../components/link.js";
import { credits, when } from "../format.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";

const PAGE_SIZE = 50;

/**
 * What the business has spent: its credit balance and this period's use, each of your API
 * keys' spend this month against its budget, and the credit ledger a page at a time
 * (exported whole as CSV by admins).
 */
/** A key's monthly budget with a meter of what it spent; "none" without one. */
function KeyBudget(props: { spent: number | null | undefined; budget: number | null }) {
  if (props.budget === null) return <>none</>;
  return (
    <>
      <meter min={0} max={props.budget} value={props.spent ?? 0} aria-hidden="true" /> {credits(props.budget)}
    </>
  );
}

export function UsagePage() {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const ledger = useLoad(() => api().billing.ledger({ limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }), [cursor]);
  const subscription = useLoad(() => api().billing.subscription(), []);
  const keys = useLoad(() => api().keys.list(), []);
  const admin = useIsAdmin();
  const action = useAction();
  const exportLedger = () =>
    void action.run(async () => {
      await saveExport(await api().billing.exportLedger({ format: "csv" }), "ledger.csv");
    });
  const period = subscription.data;

  return (
    <main>
      <h1>Usage</h1>
      <ErrorNote error={subscription.error ?? action.error} />
      <section class="card" aria-label="Credit">
        <h2>Credit</h2>
        <dl class="facts">
          <dt>Balance</dt>
          <dd data-testid="credit-balance">{credits(ledger.data?.balance ?? period?.credit_balance)} credits</dd>
          {period ? (
            <>
              <dt>Used this period</dt>
              <dd>
                {credits(period.usage_this_period)} credits ({when(period.current_period_start)} to{" "}
                {when(period.current_period_end)}, plan {period.plan.name})
              </dd>
            </>
          ) : null}
        </dl>
      </section>
      <h2>Your API keys this month</h2>
      <ErrorNote error={keys.error} />
      <CardTable columns={["Key", "Spent", "Budget"]}>
        {keys.data?.items
          .filter((key) => key.revoked_at === null)
          .map((key) => (
            <tr data-key-id={key.key_id}>
              <td data-label="Key">
                {key.name} <code>…{key.hint}</code>
              </td>
              <td data-label="Spent">{credits(key.spent_credits_this_month)}</td>
              <td data-label="Budget">
                <KeyBudget spent={key.spent_credits_this_month} budget={key.budget_credits_per_month} />
              </td>
            </tr>
          ))}
      </CardTable>
      <div class="title-row">
        <h2>Credit ledger</h2>
        {admin ? (
          <button type="button" class="secondary" disabled={action.busy} onClick={exportLedger}>
            Export CSV
          </button>
        ) : null}
      </div>
      <ErrorNote error={ledger.error} />
      <CardTable
        columns={["When", "Kind", "Amount", "Balance after", "Job"]}
        empty={ledger.data?.items.length === 0 && "No entries yet."}
      >
        {ledger.data?.items.map((entry) => (
          <tr>
            <td data-label="When">{when(entry.created_at)}</td>
            <td data-label="Kind">{entry.kind}</td>
            <td data-label="Amount">{credits(entry.amount)}</td>
            <td data-label="Balance after">{credits(entry.balance_after)}</td>
            <td data-label="Job">
              {entry.job_id ? <Link href={`/jobs/${entry.job_id}`}>{entry.job_id}</Link> : "—"}
              {entry.usage ? <span class="hint"> {Math.round(entry.usage.wall_seconds)} s</span> : null}
            </td>
          </tr>
        ))}
      </CardTable>
      <nav class="pager" aria-label="Pages">
        {cursors.length > 0 ? (
          <button type="button" class="secondary" onClick={() => setCursors(cursors.slice(0, -1))}>
            Newer
          </button>
        ) : null}
        {ledger.data?.next_cursor ? (
          <button type="button" class="secondary" onClick={() => setCursors([...cursors, ledger.data!.next_cursor!])}>
            Older
          </button>
        ) : null}
      </nav>
    </main>
  );
}
