import { ConfirmButton } from "../components/confirm-button.js";
import { CronPreview } from "../components/cron-preview.js";
import { ErrorNote } from "../components/error-note.js";
import { Link } from "../components/link.js";
import { RunsTable } from "../components/runs-table.js";
import { StateBadge } from "../components/state-badge.js";
import { when } from "../format.js";
import { useNodeNames } from "../node-names.js";
import { navigate } from "../router.js";
import { NO_FILTER, searchOf } from "../run-filter.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";
import { PauseButton } from "./schedules.js";

const RECENT_RUNS = 20;
const WEEK_MS = 7 * 86_400_000;

/** One schedule: when it runs next, its last run, pause or resume, delete, and its runs with the ways to filter them. */
export function SchedulePage(props: { scheduleId: string }) {
  const schedule = useLoad(() => api().schedules.retrieve(props.scheduleId), [props.scheduleId], { pollMs: 10_000 });
  const runs = useLoad(
    () => api().jobs.list({ schedule_id: props.scheduleId, limit: RECENT_RUNS }),
    [props.scheduleId],
    { pollMs: 5000 },
  );
  const nodeNames = useNodeNames();
  const action = useAction(() => schedule.reload());
  const current = schedule.data?.schedule;
  if (current === undefined)
    return (
      <main>
        <ErrorNote error={schedule.error} />
        {schedule.error === undefined ? <p class="hint">Loading…</p> : null}
      </main>
    );

  const all = { ...NO_FILTER, schedule: current.schedule_id };
  const failedThisWeek = {
    ...all,
    states: ["failed" as const, "timed_out" as const],
    after: new Date(Date.now() - WEEK_MS).toISOString(),
  };
  return (
    <main>
      <div class="title-row">
        <h1>{current.name ?? current.schedule_id}</h1>
        <StateBadge state={current.state} />
      </div>
      <div class="actions page-actions">
        <PauseButton schedule={current} busy={action.busy} onDone={action.act} />
        <ConfirmButton
          label="Delete…"
          title={`Delete the schedule ${current.name ?? current.schedule_id}?`}
          confirm="Delete the schedule"
          disabled={action.busy}
          onConfirm={() =>
            void action.run(async () => {
              await api().schedules.delete(current.schedule_id);
              navigate("/schedules", { replace: true });
            })
          }
        >
          <p>It makes no more jobs. The jobs it made are kept.</p>
        </ConfirmButton>
      </div>
      <ErrorNote error={action.error} />
      <dl class="facts">
        <dt>Cron</dt>
        <dd>
          <code>{current.cron}</code> in {current.timezone}
        </dd>
        <dt>Next run</dt>
        <dd>{current.state === "paused" ? "paused" : when(current.next_run_at)}</dd>
        <dt>Last run</dt>
        <dd>
          {current.last_job_id ? (
            <Link href={`/jobs/${current.last_job_id}`}>{when(current.last_run_at)}</Link>
          ) : (
            "not yet"
          )}
        </dd>
        {current.last_error ? (
          <>
            <dt>Last tick made no job</dt>
            <dd class="error">
              {current.last_error.message} <code>{current.last_error.code}</code>
            </dd>
          </>
        ) : null}
        <dt>Overlap</dt>
        <dd>
          {current.overlap.replaceAll("_", " ")}
          {current.skipped_count > 0 ? `, ${current.skipped_count} ticks skipped` : ""}
        </dd>
        <dt>Job</dt>
        <dd>
          <code>{current.job.command.join(" ")}</code> on pool {current.job.pool_id}
        </dd>
      </dl>
      {current.state === "active" ? <CronPreview cron={current.cron} timezone={current.timezone} /> : null}
      <h2>Runs</h2>
      <p class="actions">
        <Link href={`/jobs${searchOf(all)}`}>All its runs</Link>
        <Link href={`/jobs${searchOf(failedThisWeek)}`}>Failed in the last 7 days</Link>
      </p>
      <ErrorNote error={runs.error} />
      <RunsTable jobs={runs.data?.items ?? []} nodeNames={nodeNames} label="Runs of the schedule" />
      {runs.data?.items.length === 0 ? <p class="hint">No runs yet.</p> : null}
    </main>
  );
}
