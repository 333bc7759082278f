import { describe, expect, it } from "vitest";
import type { JobEvent } from "../../shared/contract/index.js";
import { queuedJobRecord } from "../../test/harness/job-records.js";
import { eventOfRecord } from "./job-event.js";

const step = (state: JobEvent["state"], at: string, reason: string): JobEvent => ({
  at,
  state,
  attempt: 1,
  reason,
  node_id: null,
});
const submitted = step("queued", "2026-03-01T00:00:00.000Z", "submitted");
const started = step("running", "2026-03-01T00:00:02.000Z", "started");
const ended = step("succeeded", "2026-03-01T00:00:05.000Z", "exited");

describe("eventOfRecord", () => {
  it("a record that entered an event's state stands for that event, with the job without env or timeline", () => {
    const record = queuedJobRecord({
      state: "succeeded",
      env: { TOKEN: "secret" },
      timeline: [submitted, started, ended],
    });
    const event = eventOfRecord(record);
    expect(event).toMatchObject({
      type: "job.succeeded",
      created_at: ended.at,
      data: { job: { job_id: record.job_id, state: "succeeded" } },
    });
    expect(event?.data.job).not.toHaveProperty("env");
    expect(event?.data.job).not.toHaveProperty("timeline");
    expect(eventOfRecord(queuedJobRecord({ state: "running", timeline: [submitted, started] }))?.type).toBe(
      "job.started",
    );
  });

  it("every revision of one transition makes the same event id; another transition another", () => {
    const running = queuedJobRecord({ state: "running", timeline: [submitted, started] });
    const again = { ...running, exit_code: null, updated_at: "2026-03-01T00:00:03.000Z" };
    expect(eventOfRecord(again)?.id).toBe(eventOfRecord(running)?.id);
    const retriedRun = queuedJobRecord({
      state: "running",
      timeline: [
        submitted,
        started,
        step("queued", "2026-03-01T00:00:06.000Z", "retried"),
        step("running", "2026-03-01T00:00:08.000Z", "started"),
      ],
    });
    expect(eventOfRecord(retriedRun)?.id).not.toBe(eventOfRecord(running)?.id);
  });

  it("states that make no event make none", () => {
    expect(eventOfRecord(queuedJobRecord({ timeline: [submitted] }))).toBeNull();
    expect(
      eventOfRecord(
        queuedJobRecord({
          state: "assigned",
          timeline: [submitted, step("assigned", "2026-03-01T00:00:01.000Z", "assigned")],
        }),
      ),
    ).toBeNull();
  });
});
