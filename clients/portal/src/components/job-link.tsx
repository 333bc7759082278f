import { api } from "../session.js";
import { useLoad } from "../use-async.js";
import { Link } from "./link.js";
import { StateBadge } from "./state-badge.js";

/** A link to another job, named and with its state once read (a job deleted since shows its id alone). */
export function JobLink(props: { jobId: string }) {
  const job = useLoad(() => api().jobs.retrieve(props.jobId), [props.jobId]);
  const found = job.data?.job;
  return (
    <span class="job-link">
      <Link href={`/jobs/${props.jobId}`}>{found?.name ?? props.jobId}</Link>{" "}
      {found ? <StateBadge state={found.state} /> : null}
    </span>
  );
}

/** Up to `shown` jobs as links with their states, then the rest as plain links (a job may have 1,000 dependents). */
export function JobLinks(props: { jobIds: readonly string[]; shown?: number }) {
  const shown = props.shown ?? 20;
  return (
    <ul class="job-links">
      {props.jobIds.slice(0, shown).map((jobId) => (
        <li key={jobId}>
          <JobLink jobId={jobId} />
        </li>
      ))}
      {props.jobIds.slice(shown).map((jobId) => (
        <li key={jobId}>
          <Link href={`/jobs/${jobId}`}>{jobId}</Link>
        </li>
      ))}
    </ul>
  );
}
