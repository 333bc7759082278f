import { useEffect, useState } from "preact/hooks";

/** The reader's own time zone, as the browser knows it. */
export const OWN_TIME_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

const SHOWN_RUNS = 5;

function inZone(at: Date, timeZone: string): string {
  // dateStyle and timeStyle cannot be given with timeZoneName: the fields one by one.
  return at.toLocaleString(undefined, {
    weekday: "short",
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    timeZone,
    timeZoneName: "short",
  });
}

/**
 * The next ticks of a cron expression read in `timezone`, shown in the reader's own time
 * zone (and in the schedule's, when that is another). croner, which the scheduler reads
 * the expression with, runs here too: loaded with this preview only, so other pages do not
 * carry it.
 */
export function CronPreview(props: { cron: string; timezone: string }) {
  const [runs, setRuns] = useState<Date[]>();
  const [problem, setProblem] = useState<string>();
  useEffect(() => {
    let current = true;
    const cron = props.cron.trim();
    setRuns(undefined);
    setProblem(undefined);
    if (cron === "") return;
    const fields = cron.split(/\s+/).length;
    if (fields !== 5 && fields !== 6) {
      setProblem("5 fields (minute hour day month weekday), or 6 with seconds first");
      return;
    }
    void import("croner").then(({ Cron }) => {
      if (!current) return;
      try {
        setRuns(new Cron(cron, { timezone: props.timezone || "UTC", paused: true }).nextRuns(SHOWN_RUNS));
      } catch (error) {
        setProblem((error as Error).message.replace(/^CronPattern: /, ""));
      }
    });
    return () => {
      current = false;
    };
  }, [props.cron, props.timezone]);

  const zone = props.timezone || "UTC";
  return (
    <div class="cron-preview" data-testid="cron-preview" aria-live="polite">
      {problem ? <p class="error">Not a cron expression: {problem}</p> : null}
      {runs && runs.length === 0 ? <p class="hint">It never fires.</p> : null}
      {runs && runs.length > 0 ? (
        <>
          <p class="hint">Next runs, in your time zone ({OWN_TIME_ZONE}):</p>
          <ol>
            {runs.map((run) => (
              <li>
                <time dateTime={run.toISOString()}>{inZone(run, OWN_TIME_ZONE)}</time>
                {zone !== OWN_TIME_ZONE ? <span class="hint"> ({inZone(run, zone)})</span> : null}
              </li>
            ))}
          </ol>
        </>
      ) : null}
    </div>
  );
}
