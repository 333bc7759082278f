import { CardTable } from "../components/card-table.js";
import { useState } from "preact/hooks";
import { CreateScheduleRequest, OverlapPolicy, type Schedule } from "../../../../shared/contract/index.js";
import { CronPreview, OWN_TIME_ZONE } from "../components/cron-preview.js";
import { ErrorNote, Problems } from "../components/error-note.js";
import { EMPTY_JOB, JobFields, jobBodyOf } from "../components/job-fields.js";
import { Link } from "../components/link.js";
import { StateBadge } from "../components/state-badge.js";
import { problemsOf, when } from "../format.js";
import { navigate } from "../router.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";

const OVERLAP_WORDS: Record<OverlapPolicy, string> = {
  skip: "skip the tick while the last job runs",
  queue: "queue the new job behind the last",
  cancel_previous: "cancel the last job and start the new one",
};

/** Pause or resume, as a button of a schedule. */
export function PauseButton(props: {
  schedule: Schedule;
  busy: boolean;
  onDone: (run: () => Promise<unknown>) => void;
}) {
  const { schedule } = props;
  const paused = schedule.state === "paused";
  const label = schedule.name ?? schedule.schedule_id;
  return (
    <button
      type="button"
      class="secondary"
      disabled={props.busy}
      aria-label={`${paused ? "Resume" : "Pause"} ${label}`}
      onClick={() =>
        props.onDone(() =>
          paused ? api().schedules.resume(schedule.schedule_id) : api().schedules.pause(schedule.schedule_id),
        )
      }
    >
      {paused ? "Resume" : "Pause"}
    </button>
  );
}

/** The business's schedules, and a form for a new one with the next runs of its cron expression. */
export function SchedulesPage() {
  const schedules = useLoad(() => api().schedules.list({ limit: 200 }), [], { pollMs: 10_000 });
  const action = useAction(() => schedules.reload());
  return (
    <main>
      <h1>Schedules</h1>
      <ErrorNote error={schedules.error ?? action.error} />
      <CardTable
        columns={["Schedule", "When", "State", "Next run", "Last run"]}
        actions
        empty={schedules.data?.items.length === 0 && "No schedules yet."}
      >
        {schedules.data?.items.map((schedule) => (
          <tr data-schedule-id={schedule.schedule_id}>
            <td data-label="Schedule">
              <Link href={`/schedules/${schedule.schedule_id}`}>{schedule.name ?? schedule.schedule_id}</Link>
            </td>
            <td data-label="When">
              <code>{schedule.cron}</code> <span class="hint">{schedule.timezone}</span>
            </td>
            <td data-label="State">
              <StateBadge state={schedule.state} />
            </td>
            <td data-label="Next run">{when(schedule.next_run_at)}</td>
            <td data-label="Last run">
              {schedule.last_job_id ? (
                <Link href={`/jobs/${schedule.last_job_id}`}>{when(schedule.last_run_at)}</Link>
              ) : (
                "—"
              )}
              {schedule.last_error ? <span class="error"> {schedule.last_error.message}</span> : null}
            </td>
            <td class="row-actions">
              <PauseButton schedule={schedule} busy={action.busy} onDone={action.act} />
            </td>
          </tr>
        ))}
      </CardTable>
      <CreateScheduleForm />
    </main>
  );
}

function CreateScheduleForm() {
  const [name, setName] = useState("");
  const [cron, setCron] = useState("0 2 * * *");
  const [timezone, setTimezone] = useState(OWN_TIME_ZONE);
  const [overlap, setOverlap] = useState<OverlapPolicy>("skip");
  const [paused, setPaused] = useState(false);
  const [job, setJob] = useState(EMPTY_JOB);
  const [problems, setProblems] = useState<string[]>([]);
  const nodes = useLoad(() => api().nodes.list(), []);
  const action = useAction();

  const submit = (event: Event) => {
    event.preventDefault();
    const parsed = CreateScheduleRequest.safeParse({
      ...(name.trim() ? { name: name.trim() } : {}),
      cron,
      timezone,
      overlap,
      paused,
      job: jobBodyOf(job),
    });
    if (!parsed.success) {
      setProblems(problemsOf(parsed.error.issues));
      return;
    }
    setProblems([]);
    void action.run(async () => {
      const created = await api().schedules.create(parsed.data);
      navigate(`/schedules/${created.schedule.schedule_id}`);
    });
  };

  return (
    <form class="stack card" onSubmit={submit} aria-label="Create a schedule">
      <h2>New schedule</h2>
      <label>
        Schedule name (optional)
        <input name="schedule-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <div class="grid">
        <label>
          Cron expression
          <input
            name="cron"
            required
            value={cron}
            onInput={(e) => setCron(e.currentTarget.value)}
            aria-describedby="cron-help"
          />
        </label>
        <label>
          Time zone
          <input
            name="timezone"
            required
            list="time-zones"
            value={timezone}
            onInput={(e) => setTimezone(e.currentTarget.value)}
          />
          <datalist id="time-zones">
            {Intl.supportedValuesOf("timeZone").map((zone) => (
              <option value={zone} />
            ))}
          </datalist>
        </label>
        <label>
          When a run is still going at the next tick
          <select name="overlap" value={overlap} onChange={(e) => setOverlap(e.currentTarget.value as OverlapPolicy)}>
            {OverlapPolicy.options.map((policy) => (
              <option value={policy}>{OVERLAP_WORDS[policy]}</option>
            ))}
          </select>
        </label>
      </div>
      <p class="hint" id="cron-help">
        Minute, hour, day of the month, month, day of the week (<code>0 2 * * 1-5</code>: 02:00 on weekdays), read in
        the time zone.
      </p>
      <CronPreview cron={cron} timezone={timezone} />
      <label class="check">
        <input type="checkbox" checked={paused} onChange={() => setPaused(!paused)} /> Create it paused
      </label>
      <fieldset class="stack">
        <legend>The job each run submits</legend>
        <JobFields draft={job} onDraft={setJob} nodes={nodes.data?.items ?? []} />
      </fieldset>
      <Problems problems={problems} />
      <button type="submit" disabled={action.busy}>
        Create schedule
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}
