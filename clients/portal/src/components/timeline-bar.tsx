import type { JobEvent } from "../../../../shared/contract/index.js";
import { duration, when } from "../format.js";
import { segmentsOf } from "../job-times.js";
import { StateBadge } from "./state-badge.js";

/**
 * A job's states as one bar, each part as wide as the time spent in it (the open one grows
 * with `now`), and below it the same as a list a screen reader reads: when, which state,
 * why, for how long, and how each attempt ended.
 */
export function TimelineBar(props: { timeline: JobEvent[]; now: number; nodeNames: ReadonlyMap<string, string> }) {
  const segments = segmentsOf(props.timeline, props.now);
  return (
    <section aria-label="Timeline">
      <h2>Timeline</h2>
      <div class="timeline-bar" aria-hidden="true">
        {segments
          .filter((segment) => segment.ms > 0)
          .map((segment) => (
            <div
              class={`segment state-${segment.state}`}
              style={{ flexGrow: segment.ms }}
              title={`${segment.state}: ${duration(segment.ms)}`}
            >
              <span>
                {segment.state.replaceAll("_", " ")} {duration(segment.ms)}
              </span>
            </div>
          ))}
      </div>
      <ol class="timeline">
        {props.timeline.map((event, index) => {
          const segment = segments[index]!;
          return (
            <li data-state={event.state}>
              <time dateTime={event.at}>{when(event.at)}</time> <StateBadge state={event.state} />{" "}
              {event.reason.replaceAll("_", " ")}
              {event.node_id ? ` on ${props.nodeNames.get(event.node_id) ?? event.node_id}` : ""}
              {event.exit_code !== null && event.exit_code !== undefined ? `, exit code ${event.exit_code}` : ""}
              {event.error ? `: ${event.error.message}` : ""}{" "}
              <span class="hint">
                (attempt {event.attempt}
                {segment.ms > 0 ? `, ${duration(segment.ms)}` : ""})
              </span>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
