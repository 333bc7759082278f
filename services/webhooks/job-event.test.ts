import { describe, expect, it } from "vitest";
import type { JobEvent } from "../../shared/contract/index.js";
import { queuedJobRecord } from "../../test/harness/job-records.js";
import { eventsOfRecord } from "./job-event.js";

/** The event of the record's current transition: the last of its events. */
const eventOfRecord = (record: Parameters<typeof eventsOfRecord>[0]) => eventsOfRecord(record).at(-1) ?? null;

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

  it("a revision that ends an attempt right after its start stands for the start too (written in one change, decision 0095)", () => {
    const given = step("assigned", "2026-03-01T00:00:01.000Z", "assigned");
    const ending = queuedJobRecord({ state: "succeeded", timeline: [submitted, given, started, ended] });
    const running = queuedJobRecord({ state: "running", timeline: [submitted, given, started] });
    const events = eventsOfRecord(ending);
    expect(events.map(({ type, created_at }) => [type, created_at])).toEqual([
      ["job.started", started.at],
      ["job.succeeded", ended.at],
    ]);
    // The same id as the start's own revision made, when it was written alone: delivered once.
    expect(events[0]!.id).toBe(eventsOfRecord(running)[0]!.id);
    expect(eventsOfRecord(running).map(({ type }) => type)).toEqual(["job.started"]);
  });

  it("a failed attempt sent back to wait for its retry stands for its start; a start of an earlier attempt is not made again", () => {
    const failedRun = { ...step("failed", "2026-03-01T00:00:04.000Z", "exited"), attempt: 2 };
    const waiting = { ...step("queued", "2026-03-01T00:00:04.000Z", "retry_scheduled"), attempt: 2 };
    const secondStart = { ...step("running", "2026-03-01T00:00:03.000Z", "started"), attempt: 2 };
    const retrying = queuedJobRecord({
      state: "queued",
      timeline: [submitted, started, secondStart, failedRun, waiting],
    });
    expect(eventsOfRecord(retrying).map(({ type, created_at }) => [type, created_at])).toEqual([
      ["job.started", secondStart.at],
    ]);
    const cancelledLater = queuedJobRecord({
      state: "cancelled",
      timeline: [
        submitted,
        started,
        { ...step("queued", "2026-03-01T00:00:04.000Z", "node_lost"), attempt: 2 },
        { ...step("cancelled", "2026-03-01T00:00:06.000Z", "cancelled"), attempt: 2 },
      ],
    });
    expect(eventsOfRecord(cancelledLater).map(({ type }) => type)).toEqual(["job.cancelled"]);
  });
});
