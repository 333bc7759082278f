import { CardTable } from "./card-table.js";
import { duration, when } from "../format.js";
import type { AttemptSummary } from "../job-times.js";
import { StateBadge } from "./state-badge.js";

/** Each attempt of a job: its node, when it ran and for how long, how it ended, and a button to read its log alone. */
export function AttemptsTable(props: {
  attempts: AttemptSummary[];
  now: number;
  nodeNames: ReadonlyMap<string, string>;
  onShowLog: (attempt: number) => void;
}) {
  if (props.attempts.length === 0) return null;
  return (
    <section aria-label="Attempts">
      <h2>Attempts</h2>
      <CardTable columns={["Attempt", "Node", "Started", "Ran for", "Result"]} actions>
        {props.attempts.map((attempt) => (
          <tr data-attempt={attempt.attempt}>
            <td data-label="Attempt">{attempt.attempt}</td>
            <td data-label="Node">
              {attempt.node_id === null ? "—" : (props.nodeNames.get(attempt.node_id) ?? attempt.node_id)}
            </td>
            <td data-label="Started">{when(attempt.started_at)}</td>
            <td data-label="Ran for">
              {attempt.started_at === null
                ? "—"
                : duration(
                    (attempt.ended_at === null ? props.now : Date.parse(attempt.ended_at)) -
                      Date.parse(attempt.started_at),
                  )}
            </td>
            <td data-label="Result" class="attempt-result">
              {attempt.outcome === null ? (
                <StateBadge state={attempt.started_at === null ? "assigned" : "running"} />
              ) : (
                <>
                  <StateBadge state={attempt.outcome === "queued" ? "requeued" : attempt.outcome} />
                  {attempt.exit_code !== null ? ` exit code ${attempt.exit_code}` : ""}
                  {attempt.error ? (
                    <>
                      {" "}
                      {attempt.error.message} <code>{attempt.error.code}</code>
                    </>
                  ) : null}
                </>
              )}
            </td>
            <td class="row-actions">
              <button
                type="button"
                class="secondary"
                aria-label={`Show the log of attempt ${attempt.attempt}`}
                onClick={() => props.onShowLog(attempt.attempt)}
              >
                Show log
              </button>
            </td>
          </tr>
        ))}
      </CardTable>
    </section>
  );
}
