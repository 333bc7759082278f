import { useState } from "preact/hooks";
import { JobState } from "../../../../shared/contract/index.js";
import type { RpcRequest } from "../../../sdk/src/index.js";
import { ErrorNote } from "../components/error-note.js";
import { Link } from "../components/link.js";
import { StateBadge } from "../components/state-badge.js";
import { when } from "../format.js";
import { api } from "../session.js";
import { useLoad } from "../use-async.js";

/** How often the list is read again, so state changes show without a reload. */
const POLL_MS = 2000;

export function JobsListPage() {
  const [state, setState] = useState("");
  const [pool, setPool] = useState("");
  const filter: RpcRequest<"listJobs"> = { limit: 50 };
  if (state !== "") filter.state = state as JobState;
  if (pool.trim() !== "") filter.pool_id = pool.trim();
  const jobs = useLoad(() => api().jobs.list(filter), [state, pool], { pollMs: POLL_MS });

  return (
    <main>
      <div class="title-row">
        <h1>Jobs</h1>
        <Link href="/submit" class="button">
          Submit a job
        </Link>
      </div>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <label>
          State
          <select name="state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
            <option value="">any</option>
            {JobState.options.map((option) => (
              <option value={option}>{option}</option>
            ))}
          </select>
        </label>
        <label>
          Pool
          <input name="pool" value={pool} placeholder="any" onChange={(e) => setPool(e.currentTarget.value)} />
        </label>
      </form>
      <ErrorNote error={jobs.error} />
      <div class="table-wrap">
        <table class="cards">
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">State</th>
              <th scope="col">Type</th>
              <th scope="col">Pool</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {jobs.data?.items.map((job) => (
              <tr data-job-id={job.job_id}>
                <td data-label="Job">
                  <Link href={`/jobs/${job.job_id}`}>{job.name ?? job.job_id}</Link>
                </td>
                <td data-label="State">
                  <StateBadge state={job.state} />
                </td>
                <td data-label="Type">{job.type}</td>
                <td data-label="Pool">{job.pool_id}</td>
                <td data-label="Created">{when(job.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {jobs.data?.items.length === 0 ? <p class="hint">No jobs match.</p> : null}
      </div>
    </main>
  );
}
