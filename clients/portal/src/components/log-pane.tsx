import { useEffect, useRef, useState } from "preact/hooks";
import { LogEndEventData, LogEventData } from "../../../../shared/contract/index.js";
import { api } from "../session.js";

type Line = LogEventData & { id: string };

/**
 * A job's log, live: an EventSource on a signed stream URL. When the stream drops, the
 * signed URL may have expired, so a fresh one is asked for and opened from the last line
 * received (`last_event_id`): nothing is missed or shown twice. Ends on `end`.
 */
/** `onEnd`: the job just became terminal (its page reloads the job, so its state shows at once). */
export function LogPane(props: { jobId: string; onEnd?: () => void }) {
  const [lines, setLines] = useState<Line[]>([]);
  const [end, setEnd] = useState<LogEndEventData>();
  const [status, setStatus] = useState("connecting");
  const pane = useRef<HTMLDivElement>(null);
  const follow = useRef(true);

  useEffect(() => {
    let source: EventSource | undefined;
    let lastEventId: string | undefined;
    let stopped = false;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let failures = 0;
    setLines([]);
    setEnd(undefined);

    const open = async () => {
      try {
        const { url } = await api().call("logStreamUrl", { job_id: props.jobId });
        if (stopped) return;
        const target = new URL(url, location.origin);
        if (lastEventId !== undefined) target.searchParams.set("last_event_id", lastEventId);
        source = new EventSource(target);
        source.addEventListener("open", () => {
          failures = 0;
          setStatus("live");
        });
        source.addEventListener("log", (event) => {
          const message = event as MessageEvent<string>;
          lastEventId = message.lastEventId;
          const line = { ...LogEventData.parse(JSON.parse(message.data)), id: message.lastEventId };
          setLines((previous) => [...previous, line]);
        });
        source.addEventListener("end", (event) => {
          setEnd(LogEndEventData.parse(JSON.parse((event as MessageEvent<string>).data)));
          setStatus("ended");
          source?.close();
          props.onEnd?.();
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
      source?.close();
    };
  }, [props.jobId]);

  // Keeps the newest line in view unless the reader scrolled up to read.
  useEffect(() => {
    const element = pane.current;
    if (element && follow.current) element.scrollTop = element.scrollHeight;
  }, [lines]);
  const onScroll = () => {
    const element = pane.current;
    if (element) follow.current = element.scrollHeight - element.scrollTop - element.clientHeight < 24;
  };

  return (
    <section aria-label="Log">
      <h2>
        Log{" "}
        <span class="hint" data-testid="log-status">
          {status}
        </span>
      </h2>
      <div
        class="log-pane"
        ref={pane}
        onScroll={onScroll}
        tabIndex={0}
        role="log"
        aria-live="polite"
        aria-label="Log lines"
      >
        {lines.map((line) => (
          <div class={`log-line ${line.stream}`} key={line.id}>
            {line.line}
          </div>
        ))}
        {lines.length === 0 && end === undefined ? <div class="hint">No lines yet.</div> : null}
      </div>
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
