import { useEffect, useState } from "preact/hooks";
import { isTerminal, JobState } from "../../../../shared/contract/index.js";
import { useIsAdmin } from "../admin.js";
import { ConfirmButton } from "../components/confirm-button.js";
import { saveExport } from "../components/download.js";
import { ErrorNote } from "../components/error-note.js";
import { Link } from "../components/link.js";
import { RunsTable, type Selection } from "../components/runs-table.js";
import { navigate } from "../router.js";
import { filterFromSearch, filtersOf, isFiltered, listRequestOf, type RunFilter, searchOf } from "../run-filter.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";

/** How often the page shown is read again, so state changes show without a reload. */
const POLL_MS = 2000;
const PAGE_SIZE = 50;
const DAY_MS = 86_400_000;

/** Where each older page was opened from, so "Newer" goes back one page (cursors only lead to older jobs). */
const newerPage = new Map<string, string>();

/** `datetime-local` text (the reader's own time) for an ISO time, and back. */
function localInput(iso: string): string {
  if (iso === "") return "";
  const at = new Date(iso);
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}
function isoOf(local: string): string {
  return local === "" ? "" : new Date(local).toISOString();
}

/**
 * The runs list: every job of the business, newest first, a page at a time through the
 * whole history. The filter and the page live in the address (a view is a link, and the
 * back button undoes a filter); the page shown is read again every 2 s in place.
 */
export function JobsListPage(props: { url: URL }) {
  const filter = filterFromSearch(props.url.searchParams);
  const key = searchOf(filter);
  const jobs = useLoad(() => api().jobs.list(listRequestOf(filter, PAGE_SIZE)), [key], { pollMs: POLL_MS });
  const nodes = useLoad(() => api().nodes.list({ include_offline: true }), []);
  const nodeNames = new Map(nodes.data?.items.map((node) => [node.node_id, node.name]));
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const action = useAction();
  const admin = useIsAdmin();

  // Another filter is another list: what was ticked in the last one is not in view.
  useEffect(() => setSelected(new Set()), [searchOf({ ...filter, cursor: "" })]);

  const go = (next: RunFilter) => navigate(`/jobs${searchOf(next)}`);
  const change = (patch: Partial<RunFilter>) => go({ ...filter, ...patch, cursor: "" });
  const selection: Selection = {
    selected,
    toggle: (jobId) => {
      const next = new Set(selected);
      if (!next.delete(jobId)) next.add(jobId);
      setSelected(next);
    },
    setAll: (jobIds, on) => {
      const next = new Set(selected);
      for (const jobId of jobIds)
        if (on) next.add(jobId);
        else next.delete(jobId);
      setSelected(next);
    },
  };
  const items = jobs.data?.items ?? [];
  const ticked = items.filter((job) => selected.has(job.job_id));
  const act = (each: (jobId: string) => Promise<unknown>, jobIds: string[]) =>
    void action.run(async () => {
      await Promise.all(jobIds.map(each));
      setSelected(new Set());
      await jobs.reload();
    });
  const exportJobs = () =>
    void action.run(async () => {
      await saveExport(await api().jobs.export({ ...filtersOf(filter), format: "csv" }), "jobs.csv");
    });

  return (
    <main>
      <div class="title-row">
        <h1>Jobs</h1>
        <div class="actions">
          {admin ? (
            <button type="button" class="secondary" disabled={action.busy} onClick={exportJobs}>
              Export CSV
            </button>
          ) : null}
          <Link href="/submit" class="button">
            Submit a job
          </Link>
        </div>
      </div>
      <Filters filter={filter} onChange={change} nodes={nodes.data?.items ?? []} />
      <ErrorNote error={jobs.error ?? action.error} />
      {ticked.length > 0 ? (
        <SelectionBar ticked={ticked} busy={action.busy} act={act} clear={() => setSelected(new Set())} />
      ) : null}
      <RunsTable jobs={items} nodeNames={nodeNames} selection={selection} label="Jobs" />
      {jobs.data === undefined && jobs.error === undefined ? <p class="hint">Loading…</p> : null}
      {jobs.data?.items.length === 0 ? (
        <p class="hint">{isFiltered(filter) ? "No jobs match these filters." : "No jobs yet."}</p>
      ) : null}
      <Pager filter={filter} nextCursor={jobs.data?.next_cursor ?? null} go={go} />
    </main>
  );
}

/** What may be done with the jobs ticked: cancel the live ones, delete the finished ones. */
function SelectionBar(props: {
  ticked: Array<{ job_id: string; name: string | null; state: JobState }>;
  busy: boolean;
  act: (each: (jobId: string) => Promise<unknown>, jobIds: string[]) => void;
  clear: () => void;
}) {
  const { ticked } = props;
  const finished = ticked.filter((job) => isTerminal(job.state));
  const live = ticked.filter((job) => !isTerminal(job.state));
  return (
    <div class="selection-bar" role="region" aria-label="Selected jobs">
      <span>{ticked.length} selected</span>
      <button
        type="button"
        disabled={props.busy || live.length === 0}
        onClick={() =>
          props.act(
            (jobId) => api().jobs.cancel(jobId),
            live.map((job) => job.job_id),
          )
        }
      >
        Cancel {live.length}
      </button>
      <ConfirmButton
        label={`Delete ${finished.length}…`}
        title={`Delete ${finished.length} finished jobs?`}
        confirm="Delete them"
        disabled={props.busy || finished.length === 0}
        onConfirm={() =>
          props.act(
            (jobId) => api().jobs.delete(jobId),
            finished.map((job) => job.job_id),
          )
        }
      >
        <p>
          Their records, logs and artifacts are deleted for good. Jobs still queued or running are left as they are.
        </p>
        <ul>
          {finished.slice(0, 10).map((job) => (
            <li>{job.name ?? job.job_id}</li>
          ))}
          {finished.length > 10 ? <li>and {finished.length - 10} more</li> : null}
        </ul>
      </ConfirmButton>
      <button type="button" class="secondary" onClick={props.clear}>
        Clear selection
      </button>
    </div>
  );
}

/** Newest, newer and older pages of the list. */
function Pager(props: { filter: RunFilter; nextCursor: string | null; go: (next: RunFilter) => void }) {
  const { filter, nextCursor, go } = props;
  return (
    <nav class="pager" aria-label="Pages">
      {filter.cursor !== "" ? (
        <>
          <Link href={`/jobs${searchOf({ ...filter, cursor: "" })}`}>Newest</Link>
          <Link href={`/jobs${searchOf({ ...filter, cursor: newerPage.get(filter.cursor) ?? "" })}`}>Newer</Link>
        </>
      ) : null}
      {nextCursor ? (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            const next = nextCursor;
            newerPage.set(next, filter.cursor);
            go({ ...filter, cursor: next });
          }}
        >
          Older
        </button>
      ) : null}
    </nav>
  );
}

function Filters(props: {
  filter: RunFilter;
  onChange: (patch: Partial<RunFilter>) => void;
  nodes: { node_id: string; name: string }[];
}) {
  const { filter, onChange } = props;
  const toggleState = (state: JobState) =>
    onChange({
      states: filter.states.includes(state)
        ? filter.states.filter((held) => held !== state)
        : [...filter.states, state],
    });

  return (
    <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
      <fieldset class="state-chips">
        <legend>State</legend>
        {JobState.options.map((state) => (
          <label class="chip">
            <input
              type="checkbox"
              name="state"
              value={state}
              checked={filter.states.includes(state)}
              onChange={() => toggleState(state)}
            />
            {state.replaceAll("_", " ")}
          </label>
        ))}
      </fieldset>
      <MoreFilters filter={filter} onChange={onChange} nodes={props.nodes} />
      <MetadataChips filter={filter} onChange={onChange} />
      {isFiltered(filter) ? (
        <Link href="/jobs" class="clear-filters">
          Clear filters
        </Link>
      ) : null}
    </form>
  );
}

type FilterProps = {
  filter: RunFilter;
  onChange: (patch: Partial<RunFilter>) => void;
};

/** The filters past the states: name, pool, schedule, node, creation time, metadata; open when one is set. */
function MoreFilters(props: FilterProps & { nodes: { node_id: string; name: string }[] }) {
  const { filter, onChange } = props;
  const schedules = useLoad(() => api().schedules.list({ limit: 200 }), []);
  const [pair, setPair] = useState("");
  const more =
    filter.pool !== "" ||
    filter.name !== "" ||
    filter.metadata.length > 0 ||
    filter.after !== "" ||
    filter.before !== "" ||
    filter.schedule !== "" ||
    filter.node !== "";
  const scheduleIds = new Set(schedules.data?.items.map((schedule) => schedule.schedule_id));
  return (
    <details open={more}>
      <summary>More filters</summary>
      <div class="grid">
        <label>
          Name starts with
          <input name="name" value={filter.name} onChange={(e) => onChange({ name: e.currentTarget.value.trim() })} />
        </label>
        <label>
          Pool
          <input
            name="pool"
            value={filter.pool}
            placeholder="any"
            onChange={(e) => onChange({ pool: e.currentTarget.value.trim() })}
          />
        </label>
        <label>
          Schedule
          <select
            name="schedule"
            value={filter.schedule}
            onChange={(e) => onChange({ schedule: e.currentTarget.value })}
          >
            <option value="">any</option>
            {schedules.data?.items.map((schedule) => (
              <option value={schedule.schedule_id}>{schedule.name ?? schedule.cron}</option>
            ))}
            {filter.schedule !== "" && !scheduleIds.has(filter.schedule) ? (
              <option value={filter.schedule}>{filter.schedule}</option>
            ) : null}
          </select>
        </label>
        <label>
          Node
          <select name="node" value={filter.node} onChange={(e) => onChange({ node: e.currentTarget.value })}>
            <option value="">any</option>
            {props.nodes.map((node) => (
              <option value={node.node_id}>{node.name}</option>
            ))}
            {filter.node !== "" && !props.nodes.some((node) => node.node_id === filter.node) ? (
              <option value={filter.node}>{filter.node}</option>
            ) : null}
          </select>
        </label>
        <label>
          Created after
          <input
            name="after"
            type="datetime-local"
            value={localInput(filter.after)}
            onChange={(e) => onChange({ after: isoOf(e.currentTarget.value) })}
          />
        </label>
        <label>
          Created before
          <input
            name="before"
            type="datetime-local"
            value={localInput(filter.before)}
            onChange={(e) => onChange({ before: isoOf(e.currentTarget.value) })}
          />
        </label>
        <label>
          Metadata key=value
          <input
            name="metadata"
            value={pair}
            placeholder="team=data"
            onInput={(e) => setPair(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key !== "Enter" || !pair.includes("=")) return;
              e.preventDefault();
              onChange({ metadata: [...filter.metadata, pair.trim()] });
              setPair("");
            }}
          />
        </label>
      </div>
      <CreatedSince onChange={onChange} />
    </details>
  );
}

/** The metadata filters set, each removable. */
function MetadataChips(props: FilterProps) {
  const { filter, onChange } = props;
  return (
    <>
      {filter.metadata.length > 0 ? (
        <ul class="chips" aria-label="Metadata filters">
          {filter.metadata.map((held) => (
            <li>
              <code>{held}</code>
              <button
                type="button"
                class="link"
                aria-label={`Remove the filter ${held}`}
                onClick={() => onChange({ metadata: filter.metadata.filter((other) => other !== held) })}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

/** Jobs created in the last day, week or month. */
function CreatedSince(props: Pick<FilterProps, "onChange">) {
  const since = (days: number) =>
    props.onChange({ after: new Date(Date.now() - days * DAY_MS).toISOString(), before: "" });
  return (
    <div class="actions">
      <span class="hint">Created in the last</span>
      <button type="button" class="secondary" onClick={() => since(1)}>
        24 hours
      </button>
      <button type="button" class="secondary" onClick={() => since(7)}>
        7 days
      </button>
      <button type="button" class="secondary" onClick={() => since(30)}>
        30 days
      </button>
    </div>
  );
}
