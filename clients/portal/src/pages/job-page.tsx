import { useState } from "preact/hooks";
import { isTerminal, RERUN_OF_KEY, rerunRequest } from "../../../../shared/contract/index.js";
import type { RpcResponse } from "../../../sdk/src/index.js";
import { Artifacts } from "../components/artifacts.js";
import { AttemptsTable } from "../components/attempts-table.js";
import { ConfirmButton } from "../components/confirm-button.js";
import { ErrorNote } from "../components/error-note.js";
import { JobLink, JobLinks } from "../components/job-link.js";
import { Link } from "../components/link.js";
import { LogPane } from "../components/log-pane.js";
import { StateBadge } from "../components/state-badge.js";
import { TimelineBar } from "../components/timeline-bar.js";
import { duration, when } from "../format.js";
import { attemptsOf, queuedForMs, ranForMs } from "../job-times.js";
import { pendingReasonWords } from "../pending-reason.js";
import { useNodeNames } from "../node-names.js";
import { navigate } from "../router.js";
import { searchOf, NO_FILTER } from "../run-filter.js";
import { api } from "../session.js";
import { useAction, useLoad, useNow } from "../use-async.js";

const POLL_MS = 2000;

/** A link to a schedule, by its name once read. */
function ScheduleLink(props: { scheduleId: string }) {
  const schedule = useLoad(() => api().schedules.retrieve(props.scheduleId), [props.scheduleId]);
  return <Link href={`/schedules/${props.scheduleId}`}>{schedule.data?.schedule.name ?? props.scheduleId}</Link>;
}

function Pairs(props: { pairs: Record<string, string>; empty: string }) {
  const entries = Object.entries(props.pairs);
  if (entries.length === 0) return <span class="hint">{props.empty}</span>;
  return (
    <>
      {entries.map(([key, value]) => (
        <code class="pair">
          {key}={value}
        </code>
      ))}
    </>
  );
}

type Job = RpcResponse<"retrieveJob">["job"];

/** What may be done with the job: cancel, retry, run again, delete. */
function JobActions(props: { job: Job; action: ReturnType<typeof useAction> }) {
  const { job: current, action } = props;
  const terminal = isTerminal(current.state);
  return (
    <>
      <div class="actions page-actions">
        {!terminal ? (
          <button
            type="button"
            disabled={action.busy}
            onClick={() => action.act(() => api().jobs.cancel(current.job_id))}
          >
            Cancel job
          </button>
        ) : null}
        {current.state === "failed" || current.state === "timed_out" ? (
          <button
            type="button"
            disabled={action.busy}
            onClick={() => action.act(() => api().jobs.retry(current.job_id))}
          >
            Retry job
          </button>
        ) : null}
        {terminal ? (
          <button
            type="button"
            disabled={action.busy}
            onClick={() =>
              void action.run(async () => {
                const again = await api().jobs.submit(rerunRequest(current));
                navigate(`/jobs/${again.job_id}`);
              })
            }
          >
            Run again
          </button>
        ) : null}
        {terminal ? (
          <ConfirmButton
            label="Delete…"
            title={`Delete ${current.name ?? current.job_id}?`}
            confirm="Delete the job"
            disabled={action.busy}
            onConfirm={() =>
              void action.run(async () => {
                await api().jobs.delete(current.job_id);
                navigate("/jobs", { replace: true });
              })
            }
          >
            <p>The job's record, its log and its artifacts are deleted for good.</p>
          </ConfirmButton>
        ) : null}
      </div>
      <p class="hint">
        {terminal
          ? "Run again submits a new job with the same spec; Retry (failed or timed-out jobs) runs this job again under its own id."
          : null}
      </p>
    </>
  );
}

/** What the job is, where and how long it ran, and how it relates to other jobs. */
function JobFacts(props: {
  job: Job;
  now: number;
  nodeNames: ReadonlyMap<string, string>;
  reruns: Array<{ job_id: string }>;
}) {
  const { job: current, now, nodeNames, reruns } = props;
  const ran = ranForMs(current, now);
  const rerunOf = current.metadata[RERUN_OF_KEY];
  return (
    <dl class="facts">
      <dt>Job id</dt>
      <dd>
        <code>{current.job_id}</code>
      </dd>
      <dt>Queued for</dt>
      <dd data-testid="queued-for">{duration(queuedForMs(current, now))}</dd>
      <dt>Ran for</dt>
      <dd data-testid="ran-for">{ran === null ? "not started" : duration(ran)}</dd>
      {current.exit_code !== null ? (
        <>
          <dt>Exit code</dt>
          <dd>{current.exit_code}</dd>
        </>
      ) : null}
      <dt>Attempt</dt>
      <dd>
        {current.attempt} of {current.max_attempts}
      </dd>
      <dt>Node</dt>
      <dd>{current.node_id === null ? "—" : (nodeNames.get(current.node_id) ?? current.node_id)}</dd>
      {current.schedule_id ? (
        <>
          <dt>Schedule</dt>
          <dd>
            <ScheduleLink scheduleId={current.schedule_id} /> ·{" "}
            <Link href={`/jobs${searchOf({ ...NO_FILTER, schedule: current.schedule_id })}`}>its runs</Link>
          </dd>
        </>
      ) : null}
      {rerunOf ? (
        <>
          <dt>Run again of</dt>
          <dd data-testid="rerun-of">
            <JobLink jobId={rerunOf} />
          </dd>
        </>
      ) : null}
      {reruns.length > 0 ? (
        <>
          <dt>Run again as</dt>
          <dd data-testid="reruns">
            <JobLinks jobIds={reruns.map((rerun) => rerun.job_id)} />
          </dd>
        </>
      ) : null}
      <dt>Type</dt>
      <dd>{current.type}</dd>
      <dt>Command</dt>
      <dd>
        <code>{current.command.join(" ")}</code>
      </dd>
      <dt>Pool</dt>
      <dd>{current.pool_id}</dd>
      <dt>Labels (node selectors)</dt>
      <dd>
        <Pairs pairs={current.labels} empty="none: any node of the pool" />
      </dd>
      <dt>Metadata</dt>
      <dd>
        <Pairs pairs={current.metadata} empty="none" />
      </dd>
      <dt>Resources</dt>
      <dd>
        {current.resources.cpu} CPU, {current.resources.memory_mb} MB, {current.resources.gpu} GPU; timeout{" "}
        {duration(current.timeout_seconds * 1000)}
      </dd>
      <dt>Created</dt>
      <dd>{when(current.created_at)}</dd>
    </dl>
  );
}

/** The jobs this one waits for, and those that wait for it. */
function Dependencies(props: { job: Job }) {
  const current = props.job;
  return (
    <>
      {current.depends_on.length > 0 || current.dependents.length > 0 ? (
        <section aria-label="Dependencies">
          <h2>Dependencies</h2>
          {current.depends_on.length > 0 ? (
            <>
              <h3>Waits for</h3>
              <JobLinks jobIds={current.depends_on} />
            </>
          ) : null}
          {current.dependents.length > 0 ? (
            <>
              <h3>Jobs waiting for this one</h3>
              <JobLinks jobIds={current.dependents} />
            </>
          ) : null}
        </section>
      ) : null}
    </>
  );
}

/**
 * One job: what it is, why it waits, how long it waited and ran, its states as a timeline
 * bar, each attempt's result and log, its dependencies and dependents, its artifacts, and
 * what may be done with it: cancel, retry (failed or timed out), run again (any finished
 * job: a new job, linked by `metadata.rerun_of`), delete.
 */
export function JobPage(props: { jobId: string }) {
  const job = useLoad(() => api().jobs.retrieve(props.jobId), [props.jobId], {
    pollMs: POLL_MS,
    poll: (data) => data === undefined || !isTerminal(data.job.state),
  });
  // The jobs made by "Run again" of this one.
  const reruns = useLoad(
    () => api().jobs.list({ metadata: `${RERUN_OF_KEY}=${props.jobId}`, limit: 10 }),
    [props.jobId, job.data?.job.state],
  );
  const nodeNames = useNodeNames();
  const action = useAction(() => job.reload());
  const [attempt, setAttempt] = useState<number | null>(null);
  const current = job.data?.job;
  const now = useNow(current !== undefined && !isTerminal(current.state));

  if (current === undefined)
    return (
      <main>
        <ErrorNote error={job.error} />
        {job.error === undefined ? <p class="hint">Loading…</p> : null}
      </main>
    );

  const showLog = (which: number) => {
    setAttempt(which);
    document.getElementById("log")?.scrollIntoView();
  };
  return (
    <main>
      <ErrorNote error={job.error} />
      <div class="title-row">
        <h1>{current.name ?? current.job_id}</h1>
        <StateBadge state={current.state} />
      </div>
      <JobActions job={current} action={action} />
      <ErrorNote error={action.error} />
      {current.pending_reason ? (
        <p class="waiting" data-testid="pending-reason" role="status">
          <strong>Waiting: </strong>
          {pendingReasonWords(current.pending_reason, current)}
        </p>
      ) : null}
      {current.error ? (
        <p class="why-ended" data-testid="job-error">
          <strong>{current.state === "cancelled" ? "Cancelled: " : "Why it ended: "}</strong>
          {current.error.message} <code>{current.error.code}</code>
        </p>
      ) : null}
      <JobFacts job={current} now={now} nodeNames={nodeNames} reruns={reruns.data?.items ?? []} />
      <TimelineBar timeline={current.timeline} now={now} nodeNames={nodeNames} />
      <Dependencies job={current} />
      <AttemptsTable attempts={attemptsOf(current.timeline)} now={now} nodeNames={nodeNames} onShowLog={showLog} />
      <div id="log">
        <LogPane
          jobId={current.job_id}
          resumeKey={current.queued_at}
          attempt={attempt}
          onAttempt={setAttempt}
          onEnd={() => void job.reload()}
        />
      </div>
      <Artifacts jobId={current.job_id} artifacts={job.data?.artifacts ?? []} onChanged={job.reload} />
    </main>
  );
}
