import { isTerminal, type JobSummary } from "../../../../shared/contract/index.js";
import { duration, when } from "../format.js";
import { queuedForMs, ranForMs } from "../job-times.js";
import { useNow } from "../use-async.js";
import { Link } from "./link.js";
import { StateBadge } from "./state-badge.js";

/** Rows ticked in a list, kept by job id so a refresh that moves rows keeps them ticked. */
export interface Selection {
  selected: ReadonlySet<string>;
  toggle: (jobId: string) => void;
  setAll: (jobIds: string[], on: boolean) => void;
}

/**
 * Jobs as rows with what a team lead scans for: state, how long it ran (growing while it
 * runs) and waited, on which node, which attempt, how it exited. On a phone each row is
 * two short lines (styles.css `table.runs`), not a card of nine.
 */
export function RunsTable(props: {
  jobs: readonly JobSummary[];
  nodeNames?: ReadonlyMap<string, string>;
  selection?: Selection;
  label: string;
}) {
  const now = useNow(props.jobs.some((job) => !isTerminal(job.state)));
  const { selection } = props;
  const ids = props.jobs.map((job) => job.job_id);
  const allTicked = ids.length > 0 && ids.every((id) => selection?.selected.has(id));
  return (
    <div class="table-wrap">
      <table class="runs" aria-label={props.label}>
        <thead>
          <tr>
            {selection ? (
              <th scope="col" class="tick">
                <input
                  type="checkbox"
                  aria-label="Select every job shown"
                  checked={allTicked}
                  onChange={() => selection.setAll(ids, !allTicked)}
                />
              </th>
            ) : null}
            <th scope="col">Job</th>
            <th scope="col">State</th>
            <th scope="col">Ran for</th>
            <th scope="col">Queued for</th>
            <th scope="col">Node</th>
            <th scope="col">Attempt</th>
            <th scope="col">Exit</th>
            <th scope="col">Pool</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {props.jobs.map((job) => {
            const ran = ranForMs(job, now);
            const name = job.name ?? job.job_id;
            return (
              <tr key={job.job_id} data-job-id={job.job_id}>
                {selection ? (
                  <td class="tick">
                    <input
                      type="checkbox"
                      aria-label={`Select ${name}`}
                      checked={selection.selected.has(job.job_id)}
                      onChange={() => selection.toggle(job.job_id)}
                    />
                  </td>
                ) : null}
                <td class="job-name">
                  <Link href={`/jobs/${job.job_id}`}>{name}</Link>
                </td>
                <td class="job-state">
                  <StateBadge state={job.state} />
                </td>
                <td data-short="ran" data-col="ran">
                  {ran === null ? "—" : duration(ran)}
                </td>
                <td data-short="queued" data-col="queued">
                  {duration(queuedForMs(job, now))}
                </td>
                <td data-short="on" data-col="node">
                  {job.node_id === null ? "—" : (props.nodeNames?.get(job.node_id) ?? job.node_id)}
                </td>
                <td data-short="attempt" data-col="attempt">
                  {job.attempt}
                </td>
                <td data-short="exit" data-col="exit">
                  {job.exit_code ?? "—"}
                </td>
                <td data-short="pool" data-col="pool">
                  {job.pool_id}
                </td>
                <td data-col="created">
                  <time dateTime={job.created_at}>{when(job.created_at)}</time>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
