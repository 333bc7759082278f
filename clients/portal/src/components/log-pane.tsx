import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { LogEndEventData, LogEventData } from "../../../../shared/contract/index.js";
import { clockTime } from "../format.js";
import { api } from "../session.js";
import { saveBlob } from "./download.js";

type Line = LogEventData & { id: string };
/** A row of the pane: a line, or the head of an attempt when every attempt is shown. */
type Row = { line: Line } | { attempt: number };

/** Every row is this tall (styles.css `.log-row`), so only the rows in view are drawn (docs/decisions/0077). */
const ROW_PX = 20;
/** Rows drawn beyond each edge of the view, so a fast scroll shows no gap. */
const OVERSCAN = 30;

/** The whole log as a file: one line each, with its time and stream. */
function logFile(lines: readonly Line[]): Blob {
  return new Blob(
    lines.map((line) => `${line.ts} ${line.stream} ${line.line}\n`),
    { type: "text/plain;charset=utf-8" },
  );
}

/** A line's text with each match of `term` (already lowercased) marked. */
function Marked(props: { text: string; term: string }) {
  if (props.term === "") return <>{props.text}</>;
  const parts = [];
  const lower = props.text.toLowerCase();
  let from = 0;
  for (let at = lower.indexOf(props.term); at >= 0; at = lower.indexOf(props.term, from)) {
    parts.push(props.text.slice(from, at), <mark>{props.text.slice(at, at + props.term.length)}</mark>);
    from = at + props.term.length;
  }
  parts.push(props.text.slice(from));
  return <>{parts}</>;
}

/** A job's log lines as they stream in, of every attempt; see `LogPane`. */
function useLogStream(jobId: string, resumeKey: string, onEndProp: (() => void) | undefined) {
  const all = useRef<Line[]>([]);
  const lastEventId = useRef<string | undefined>(undefined);
  const [count, setCount] = useState(0);
  const [end, setEnd] = useState<LogEndEventData>();
  const [status, setStatus] = useState("connecting");
  const onEnd = useRef(onEndProp);
  onEnd.current = onEndProp;

  useEffect(() => {
    all.current = [];
    lastEventId.current = undefined;
    setCount(0);
  }, [jobId]);

  useEffect(() => {
    let source: EventSource | undefined;
    let stopped = false;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let frame: number | undefined;
    let failures = 0;
    setEnd(undefined);
    // Lines arrive one event each (a replay is thousands at once): the pane is drawn once a frame.
    const flush = () => {
      frame ??= requestAnimationFrame(() => {
        frame = undefined;
        setCount(all.current.length);
      });
    };

    const open = async () => {
      try {
        const { url } = await api().call("logStreamUrl", { job_id: jobId });
        if (stopped) return;
        const target = new URL(url, location.origin);
        if (lastEventId.current !== undefined) target.searchParams.set("last_event_id", lastEventId.current);
        source = new EventSource(target);
        source.addEventListener("open", () => {
          failures = 0;
          setStatus("live");
        });
        source.addEventListener("log", (event) => {
          const message = event as MessageEvent<string>;
          lastEventId.current = message.lastEventId;
          all.current.push({ ...LogEventData.parse(JSON.parse(message.data)), id: message.lastEventId });
          flush();
        });
        source.addEventListener("end", (event) => {
          source?.close();
          if (frame !== undefined) cancelAnimationFrame(frame);
          frame = undefined;
          setCount(all.current.length);
          setEnd(LogEndEventData.parse(JSON.parse((event as MessageEvent<string>).data)));
          setStatus("ended");
          onEnd.current?.();
        });
        // EventSource would retry the same URL by itself, which may have expired: a fresh one instead.
        source.addEventListener("error", () => reopen());
      } catch {
        reopen();
      }
    };
    const reopen = () => {
      source?.close();
      if (stopped) return;
      setStatus("reconnecting");
      failures += 1;
      // Backs off to 10 s so a gateway that is down is not hammered.
      retryTimer = setTimeout(() => void open(), Math.min(10_000, 250 * 2 ** failures));
    };
    void open();
    return () => {
      stopped = true;
      clearTimeout(retryTimer);
      if (frame !== undefined) cancelAnimationFrame(frame);
      source?.close();
    };
  }, [jobId, resumeKey]);

  return { all, count, end, status };
}

/** The rows in view of a long list of fixed-height rows, kept at its newest row unless the reader scrolled up to read. */
function LogRows(props: { rows: Row[]; term: string; empty: string }) {
  const { rows, term } = props;
  const pane = useRef<HTMLDivElement>(null);
  const follow = useRef(true);
  const [view, setView] = useState({ top: 0, height: 0 });

  useEffect(() => {
    const element = pane.current;
    if (element && follow.current) element.scrollTop = element.scrollHeight;
    if (element) setView({ top: element.scrollTop, height: element.clientHeight });
  }, [rows]);
  const onScroll = () => {
    const element = pane.current;
    if (!element) return;
    follow.current = element.scrollHeight - element.scrollTop - element.clientHeight < ROW_PX * 1.5;
    setView({ top: element.scrollTop, height: element.clientHeight });
  };
  const first = Math.max(0, Math.floor(view.top / ROW_PX) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((view.top + (view.height || 600)) / ROW_PX) + OVERSCAN);

  return (
    <div
      class="log-pane"
      ref={pane}
      onScroll={onScroll}
      tabIndex={0}
      role="log"
      aria-live="polite"
      aria-label="Log lines"
    >
      <div class="log-rows" style={{ height: `${rows.length * ROW_PX}px` }}>
        <div style={{ transform: `translateY(${first * ROW_PX}px)` }}>
          {rows.slice(first, last).map((row) =>
            "line" in row ? (
              <div class={`log-row log-line ${row.line.stream}`} key={row.line.id} data-attempt={row.line.attempt}>
                <span class="log-number">{row.line.seq}</span>
                <time class="log-time" dateTime={row.line.ts}>
                  {clockTime(row.line.ts)}
                </time>
                <span class="log-text">
                  <Marked text={row.line.line} term={term} />
                </span>
              </div>
            ) : (
              <div class="log-row log-attempt" key={`attempt-${row.attempt}`}>
                attempt {row.attempt}
              </div>
            ),
          )}
        </div>
      </div>
      {rows.length === 0 ? <div class="hint">{props.empty}</div> : null}
    </div>
  );
}

/**
 * A job's log, live: an EventSource on a signed stream URL. When the stream drops, the
 * signed URL may have expired, so a fresh one is asked for and opened from the last line
 * received (`last_event_id`): nothing is missed or shown twice. It ends on `end`, and
 * opens again from there when `resumeKey` changes (the job was retried or requeued).
 *
 * Each line shows its number within its attempt and its time; `attempt` shows one
 * attempt's lines only; the search keeps the lines that hold it. Download saves every line
 * received, of every attempt.
 */
export function LogPane(props: {
  jobId: string;
  resumeKey: string;
  /** One attempt's lines, or null for all. */
  attempt: number | null;
  onAttempt: (attempt: number | null) => void;
  /** The job just became terminal (its page reloads the job, so its state shows at once). */
  onEnd?: () => void;
}) {
  const { all, count, end, status } = useLogStream(props.jobId, props.resumeKey, props.onEnd);
  const [search, setSearch] = useState("");
  const term = search.trim().toLowerCase();
  const attempts = useMemo(() => [...new Set(all.current.map((line) => line.attempt))], [count]);
  const rows = useMemo(() => {
    const shown: Row[] = [];
    let attempt: number | undefined;
    for (const line of all.current) {
      if (props.attempt !== null && line.attempt !== props.attempt) continue;
      if (term !== "" && !line.line.toLowerCase().includes(term)) continue;
      if (props.attempt === null && term === "" && attempts.length > 1 && line.attempt !== attempt)
        shown.push({ attempt: line.attempt });
      attempt = line.attempt;
      shown.push({ line });
    }
    return shown;
  }, [count, props.attempt, term, attempts]);

  return (
    <section aria-label="Log">
      <h2>
        Log{" "}
        <span class="hint" data-testid="log-status">
          {status}
        </span>
      </h2>
      <div class="log-tools">
        <label>
          Search the log
          <input type="search" name="log-search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
        {attempts.length > 1 || props.attempt !== null ? (
          <label>
            Attempt
            <select
              name="log-attempt"
              aria-label="Attempt to show"
              value={props.attempt ?? ""}
              onChange={(e) => props.onAttempt(e.currentTarget.value === "" ? null : Number(e.currentTarget.value))}
            >
              <option value="">all</option>
              {attempts.map((attempt) => (
                <option value={attempt}>attempt {attempt}</option>
              ))}
            </select>
          </label>
        ) : null}
        <button
          type="button"
          class="secondary"
          disabled={count === 0}
          onClick={() => saveBlob(logFile(all.current), `${props.jobId}.log`)}
        >
          Download log
        </button>
        <span class="hint" data-testid="log-count" role="status">
          {term === "" && props.attempt === null
            ? `${count} lines`
            : `${rows.filter((row) => "line" in row).length} of ${count} lines`}
        </span>
      </div>
      <LogRows
        rows={rows}
        term={term}
        empty={count === 0 && end === undefined ? "No lines yet." : "No line matches."}
      />
      {end ? (
        <p class="hint" data-testid="log-end">
          Ended: {end.state}
          {end.exit_code !== null ? `, exit code ${end.exit_code}` : ""}
          {end.dropped_lines > 0 ? `, ${end.dropped_lines} lines dropped at the log cap` : ""}
        </p>
      ) : null}
    </section>
  );
}
