import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { EventSource } from "eventsource";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { LogEndEventData, LogEventData, logStreamPath, type LogLine } from "../../shared/contract/index.js";
import { decodeJson, encodeJson, STREAMS, subjects } from "../../shared/nats/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import { LogMessage } from "../../shared/records/index.js";
import { logLines, runningJobWithLogs } from "../harness/log-jobs.js";
import { openLogStream, readToEnd } from "../harness/log-stream-client.js";
import { errorCodeOf } from "../harness/error-code.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startLogRelay,
  startSystem,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

/** Small, so the cap test reaches it; the other tests stay below it. */
const CAP = 50;

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;
let token: string;
let baseUrl: string;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 1, registries: 1 },
    { CJS_LOG_MAX_LINES_PER_JOB: String(CAP) },
  );
  baseUrl = system.gateways[0]!.baseUrl;
  tenant = await createTenant(system.gateways[0]!.nc);
  const signedIn = await signedInClient(baseUrl, tenant);
  user = signedIn.client;
  token = signedIn.tokens.access_token;
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

function streamHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { "x-app-id": tenant.app.app_id, authorization: `Bearer ${token}`, ...extra };
}

/** Opens a job's stream on this test's gateway unless told another. */
function openStream(jobId: string, headers: Record<string, string>, base = baseUrl) {
  return openLogStream(base, logStreamPath(jobId), headers);
}

const lines = logLines;

/** A job of its own pool, polled by a node of that pool, so it is running on that node. */
function runningJob(pool: string) {
  return runningJobWithLogs(user, baseUrl, tenant.app.app_id, pool);
}

describe("the job log stream", () => {
  it("replays a finished job's lines in order, then an end event with its final state", async () => {
    const { node, jobId, push } = await runningJob("logs-replay");
    await push(1, [...lines(1, 3), { seq: 4, stream: "stderr", line: "oops", ts: new Date().toISOString() }]);
    await node.finish(jobId, "succeeded");

    const { response, frames } = await openStream(jobId, streamHeaders());
    expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(response.headers["cache-control"]).toBe("no-cache");
    expect(response.headers["x-accel-buffering"]).toBe("no");
    const { logs, end } = await readToEnd(frames);
    expect(logs.map((event) => event.data)).toEqual([
      { attempt: 1, seq: 1, stream: "stdout", line: "line 1", ts: expect.any(String) },
      { attempt: 1, seq: 2, stream: "stdout", line: "line 2", ts: expect.any(String) },
      { attempt: 1, seq: 3, stream: "stdout", line: "line 3", ts: expect.any(String) },
      { attempt: 1, seq: 4, stream: "stderr", line: "oops", ts: expect.any(String) },
    ]);
    const ids = logs.map((event) => event.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(end).toEqual({ state: "succeeded", attempt: 1, exit_code: 0, error: null, dropped_lines: 0 });
    expect(await frames.next()).toBeNull();
  });

  it("an SSE reader that disconnects and resumes with Last-Event-ID sees every line once, in order", async () => {
    const { node, jobId, push } = await runningJob("logs-resume");
    await push(1, lines(1, 6));

    const first = await openStream(jobId, streamHeaders());
    const seen: Array<{ id: number; data: LogEventData }> = [];
    for (let count = 0; count < 3; count += 1) {
      const frame = await first.frames.nextEvent();
      expect(frame?.event).toBe("log");
      seen.push({ id: Number(frame!.id), data: LogEventData.parse(JSON.parse(frame!.data!)) });
    }
    first.disconnect();

    await push(1, lines(7, 12));
    const resumed = await openStream(jobId, streamHeaders({ "last-event-id": String(seen.at(-1)!.id) }));
    // The job ends while the resumed reader is connected; lines pushed before the result all arrive.
    await push(1, lines(13, 15));
    await node.finish(jobId, "failed");
    const { logs, end } = await readToEnd(resumed.frames);
    seen.push(...logs);

    expect(seen.map((event) => event.data.line)).toEqual(lines(1, 15).map((line) => line.line));
    expect(new Set(seen.map((event) => event.id)).size).toBe(15);
    expect(end).toMatchObject({ state: "failed", attempt: 1, exit_code: 1, dropped_lines: 0 });
  });

  it("a real SSE client library follows a live job to its end event through a signed URL, without headers", async () => {
    const { node, jobId, push } = await runningJob("logs-eventsource");
    const { url, expires_at } = await user.call("logStreamUrl", { job_id: jobId });
    expect(url.startsWith(`${logStreamPath(jobId)}?`)).toBe(true);
    expect(Date.parse(expires_at)).toBeGreaterThan(Date.now());

    const source = new EventSource(new URL(url, baseUrl).href);
    const received: LogEventData[] = [];
    const lastIds: string[] = [];
    let onLog = () => {};
    source.addEventListener("log", (event) => {
      received.push(LogEventData.parse(JSON.parse(event.data)));
      lastIds.push(event.lastEventId);
      onLog();
    });
    const ended = new Promise<LogEndEventData>((resolve, reject) => {
      source.addEventListener("end", (event) => {
        source.close();
        resolve(LogEndEventData.parse(JSON.parse(event.data)));
      });
      source.addEventListener("error", (event) =>
        reject(new Error(`EventSource failed: ${event.message ?? event.code}`)),
      );
    });
    const receivedCount = (count: number) =>
      new Promise<void>((resolve) => {
        onLog = () => received.length >= count && resolve();
        onLog();
      });
    await new Promise<void>((resolve) => source.addEventListener("open", () => resolve(), { once: true }));

    await push(1, lines(1, 5));
    await receivedCount(5);
    await push(1, lines(6, 8));
    await receivedCount(8);
    await node.finish(jobId, "succeeded");
    const end = await ended;

    expect(received.map((line) => line.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(lastIds.every((id) => /^\d+$/.test(id))).toBe(true);
    expect(end).toEqual({ state: "succeeded", attempt: 1, exit_code: 0, error: null, dropped_lines: 0 });
  });

  it("answers another tenant's job as not found with the error envelope, before any stream", async () => {
    const { jobId } = await runningJob("logs-tenancy");
    const other = await createTenant(system.gateways[0]!.nc);
    const { client: stranger, tokens } = await signedInClient(baseUrl, other);

    const response = await fetch(`${baseUrl}${logStreamPath(jobId)}`, {
      headers: { "x-app-id": other.app.app_id, authorization: `Bearer ${tokens.access_token}` },
    });
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({ status: "ERROR", code: "resource.not_found" });
    expect(await errorCodeOf(stranger.call("logStreamUrl", { job_id: jobId }))).toBe("resource.not_found");
  });

  it("refuses an altered signed URL with 403, and a stream without credentials with 401", async () => {
    const { jobId } = await runningJob("logs-signed");
    const { jobId: otherJobId } = await runningJob("logs-signed-other");
    const { url } = await user.call("logStreamUrl", { job_id: jobId });
    const other = await createTenant(system.gateways[0]!.nc);
    const otherCaller = `${other.app.app_id}.${other.business.business_id}.${other.user.user_id}`;

    const altered = [
      url.replace(jobId, otherJobId),
      url.replace(/caller=[^&]+/, `caller=${otherCaller}`),
      url.replace(/expires=(\d+)/, (_, expires: string) => `expires=${Number(expires) + 3600}`),
      url.replace(/signature=[^&]+/, "signature=AAAA"),
    ];
    for (const path of altered) {
      const response = await fetch(new URL(path, baseUrl));
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ status: "ERROR", code: "url.signature_invalid" });
    }
    const bare = await fetch(`${baseUrl}${logStreamPath(jobId)}`, { headers: { "x-app-id": tenant.app.app_id } });
    expect(bare.status).toBe(401);
    expect(await bare.json()).toMatchObject({ code: "auth.missing_credentials" });
  });

  it("answers other methods on the stream path with 405 and a malformed Last-Event-ID with 400", async () => {
    const { jobId } = await runningJob("logs-methods");
    const post = await fetch(`${baseUrl}${logStreamPath(jobId)}`, { method: "POST", headers: streamHeaders() });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
    const bad = await fetch(`${baseUrl}${logStreamPath(jobId)}`, {
      headers: streamHeaders({ "last-event-id": "nope" }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: "request.invalid",
      details: { issues: [{ path: "Last-Event-ID" }] },
    });
  });

  it("drops lines past the job's cap, stores one marker line, and reports the count in the end event", async () => {
    const { node, jobId, push } = await runningJob("logs-cap");
    expect(await push(1, lines(1, 40))).toEqual({ accepted: 40, duplicates: 0, dropped: 0 });
    expect(await push(1, lines(41, 70))).toEqual({ accepted: 10, duplicates: 0, dropped: 20 });
    // A resent batch stores nothing and counts nothing twice.
    expect(await push(1, lines(41, 70))).toEqual({ accepted: 0, duplicates: 10, dropped: 20 });
    expect(await push(1, lines(71, 80))).toEqual({ accepted: 0, duplicates: 0, dropped: 10 });
    await node.finish(jobId, "failed");

    // The cap is per job: a retried attempt has nothing left, so its lines are dropped too.
    await user.call("retryJob", { job_id: jobId });
    const [second] = await node.poll(10);
    expect(second).toMatchObject({ job_id: jobId, attempt: 2 });
    expect(await push(2, lines(1, 5))).toEqual({ accepted: 0, duplicates: 0, dropped: 5 });
    await node.finish(jobId, "succeeded");

    const { frames } = await openStream(jobId, streamHeaders());
    const { logs, end } = await readToEnd(frames);
    const texts = logs.map((event) => event.data);
    expect(texts.slice(0, CAP).map((line) => line.line)).toEqual(lines(1, CAP).map((line) => line.line));
    expect(texts.slice(CAP)).toEqual([
      {
        attempt: 1,
        seq: CAP + 1,
        stream: "stderr",
        line: expect.stringMatching(/^\[log truncated: .*50 lines/),
        ts: expect.any(String),
      },
      {
        attempt: 2,
        seq: 1,
        stream: "stderr",
        line: expect.stringMatching(/^\[log truncated: /),
        ts: expect.any(String),
      },
    ]);
    expect(end).toMatchObject({ state: "succeeded", attempt: 2, dropped_lines: 35 });
  });

  it("counts in log-relay's metrics the lines stored, the lines dropped at the cap, and a push refused as stale", async () => {
    const counter = async (name: string, labels: Record<string, string> = {}) =>
      (await metricsRegistry.getSingleMetric(name)?.get())?.values.find((value) =>
        Object.entries(labels).every(([key, wanted]) => value.labels[key] === wanted),
      )?.value ?? 0;
    const before = {
      stored: await counter("cjs_log_lines_stored_total"),
      dropped: await counter("cjs_log_lines_dropped_total"),
      ok: await counter("cjs_log_pushes_total", { outcome: "ok" }),
      stale: await counter("cjs_log_pushes_total", { outcome: "job.stale_attempt" }),
    };
    const { node, jobId, push } = await runningJob("logs-metrics");
    expect(await push(1, lines(1, 40))).toMatchObject({ accepted: 40 });
    expect(await push(1, lines(41, 70))).toMatchObject({ accepted: 10, dropped: 20 });
    expect(await errorCodeOf(push(2, lines(1, 5)))).toBe("job.stale_attempt");
    await node.finish(jobId, "succeeded");

    expect((await counter("cjs_log_lines_stored_total")) - before.stored).toBe(50);
    expect((await counter("cjs_log_lines_dropped_total")) - before.dropped).toBe(20);
    expect((await counter("cjs_log_pushes_total", { outcome: "ok" })) - before.ok).toBe(2);
    expect((await counter("cjs_log_pushes_total", { outcome: "job.stale_attempt" })) - before.stale).toBe(1);
  });

  it("releases its consumer a few seconds after the client goes away, and a client back meanwhile shares it", async () => {
    const { jobId, push } = await runningJob("logs-release");
    await push(1, lines(1, 2));
    const jsm = await jetstreamManager(system.gateways[0]!.nc);
    /** The names of the consumers of `CJS_LOGS` that follow this job's lines. */
    const consumersOfJob = async () =>
      (await jsm.consumers.list(STREAMS.logs).next())
        .filter((info) =>
          (info.config.filter_subjects ?? [info.config.filter_subject]).includes(subjects.jobLogsOfJob(jobId)),
        )
        .map((info) => info.name);
    const first = await openStream(jobId, streamHeaders());
    expect((await first.frames.nextEvent())?.event).toBe("log");
    const held = await consumersOfJob();
    expect(held).toHaveLength(1);
    first.disconnect();
    // Back before the feed is let go: the same consumer, none made.
    const again = await openStream(jobId, streamHeaders());
    expect((await again.frames.nextEvent())?.event).toBe("log");
    expect(await consumersOfJob()).toEqual(held);
    again.disconnect();
    await expect.poll(consumersOfJob, { timeout: 15_000 }).toEqual([]);
  });

  it("a business's streams share its bytes a second: a log over the budget is held back, then reaches each viewer whole and in order", async () => {
    const paced = async () =>
      (await metricsRegistry.getSingleMetric("cjs_log_stream_paced_total")?.get())?.values[0]?.value ?? 0;
    // The smallest budget, 64 KiB a second: two viewers of 40 lines of 2 KB, stored as four messages, need more.
    const gateway = await startGateway(nats.url, { CJS_LOG_STREAM_BYTES_PER_SECOND: "65536" });
    try {
      const { node, jobId, push } = await runningJob("logs-bandwidth");
      const text = (seq: number) => `${seq} ${"b".repeat(2_000)}`;
      for (let from = 1; from <= 40; from += 10) await push(1, lines(from, from + 9, text));
      await node.finish(jobId, "succeeded");
      const before = await paced();
      const viewers = await Promise.all([1, 2].map(() => openStream(jobId, streamHeaders(), gateway.baseUrl)));
      const read = await Promise.all(viewers.map(({ frames }) => readToEnd(frames)));
      for (const { logs, end } of read) {
        expect(logs.map((event) => (event.data as { seq: number }).seq)).toEqual(lines(1, 40).map((line) => line.seq));
        expect(
          logs.every((event) => (event.data as { line: string }).line === text((event.data as { seq: number }).seq)),
        ).toBe(true);
        expect(end).toMatchObject({ state: "succeeded" });
      }
      expect(await paced()).toBeGreaterThan(before);
    } finally {
      await gateway.stop();
    }
  });

  it("the live tail is not paced: viewers caught up with a running job get every new line, however many bytes, none held back", async () => {
    const paced = async () =>
      (await metricsRegistry.getSingleMetric("cjs_log_stream_paced_total")?.get())?.values[0]?.value ?? 0;
    const gateway = await startGateway(nats.url, { CJS_LOG_STREAM_BYTES_PER_SECOND: "65536" });
    try {
      const { node, jobId, push } = await runningJob("logs-live-unpaced");
      await push(1, lines(1, 1));
      const before = await paced();
      const viewers = await Promise.all([1, 2, 3].map(() => openStream(jobId, streamHeaders(), gateway.baseUrl)));
      // Each has line 1 (a replay of 60 bytes, well inside the budget): from here on it reads the live tail.
      for (const { frames } of viewers) expect(JSON.parse((await frames.nextEvent())!.data!)).toMatchObject({ seq: 1 });
      // Three viewers of 40 lines of 2 KB: 240 KB, nearly four seconds' worth of the replay budget.
      const text = (seq: number) => `${seq} ${"l".repeat(2_000)}`;
      for (let from = 2; from <= 41; from += 10) await push(1, lines(from, from + 9, text));
      await node.finish(jobId, "succeeded");
      for (const { frames } of viewers) {
        const { logs, end } = await readToEnd(frames);
        expect(logs.map((event) => (event.data as { seq: number }).seq)).toEqual(lines(2, 41).map((line) => line.seq));
        expect(end).toMatchObject({ state: "succeeded" });
      }
      expect(await paced()).toBe(before);
    } finally {
      await gateway.stop();
    }
  });

  it("sends a keep-alive comment on an idle stream, and ends open streams when the gateway stops", async () => {
    const gateway = await startGateway(nats.url, { CJS_SSE_KEEPALIVE_SECONDS: "1" });
    const stopped = (async () => {
      const { jobId } = await runningJob("logs-keepalive");
      const { frames } = await openStream(jobId, streamHeaders(), gateway.baseUrl);
      expect(await frames.next()).toEqual({ comment: "keep-alive" });
      return frames;
    })().finally(() => gateway.stop());
    expect(await (await stopped).next()).toBeNull();
  });
});

/** Every line stored for an attempt, in stream order, read straight from the log stream. */
async function storedLines(jobId: string, attempt = 1): Promise<LogLine[]> {
  const jsm = await jetstreamManager(system.gateways[0]!.nc);
  const stored: LogLine[] = [];
  for (let seq = 1; ; ) {
    const message = await jsm.direct
      .getMessage(STREAMS.logs, { seq, next_by_subj: subjects.jobLogs(jobId, attempt) })
      .catch(() => null);
    if (!message) return stored;
    stored.push(...LogMessage.parse(decodeJson(message.data)).lines);
    seq = message.seq + 1;
  }
}

describe("a resent log batch", () => {
  it("after lines stored one bare line per message (by an earlier version), stores only what follows them and streams all once", async () => {
    const { node, jobId, push } = await runningJob("logs-earlier-format");
    const js = jetstream(system.gateways[0]!.nc);
    for (const line of lines(1, 2)) await js.publish(subjects.jobLogs(jobId, 1), encodeJson(line));
    expect(await push(1, lines(1, 4))).toEqual({ accepted: 2, duplicates: 2, dropped: 0 });
    await node.finish(jobId, "succeeded");
    const { logs } = await readToEnd((await openStream(jobId, streamHeaders())).frames);
    expect(logs.map((event) => event.data.line)).toEqual(lines(1, 4).map((line) => line.line));
    const resumed = await openStream(jobId, streamHeaders({ "last-event-id": String(logs[0]!.id) }));
    expect((await readToEnd(resumed.frames)).logs.map((event) => event.data.seq)).toEqual([2, 3, 4]);
  });

  it("after a push the stream refused part-way, stores every line once, in order, and the stream replays each once", async () => {
    const { node, jobId, push } = await runningJob("logs-refused");
    // 342 KB: more than one stored message holds (256 KiB), so it is stored as lines 1-4 (80 KB), then 5-6 and 7-8 (131 KB each).
    const batch = lines(1, 8, (seq) => String(seq % 10).repeat(seq <= 4 ? 20_000 : 65_536));
    const jsm = await jetstreamManager(system.gateways[0]!.nc);
    const { config } = await jsm.streams.info(STREAMS.logs);
    // A real limit of the broker: messages over 100 KB are refused, so the push fails after its first message.
    await jsm.streams.update(STREAMS.logs, { ...config, max_msg_size: 100_000 });
    try {
      expect(await errorCodeOf(push(1, batch))).toBe("internal.error");
    } finally {
      await jsm.streams.update(STREAMS.logs, { ...config, max_msg_size: config.max_msg_size });
    }
    expect((await storedLines(jobId)).map((line) => line.seq)).toEqual([1, 2, 3, 4]);

    // The node sends the same batch again, as the agent does after any failure.
    expect(await push(1, batch)).toEqual({ accepted: 4, duplicates: 4, dropped: 0 });
    expect(await push(1, lines(9, 10))).toEqual({ accepted: 2, duplicates: 0, dropped: 0 });
    expect(await storedLines(jobId)).toEqual(
      [...batch, ...lines(9, 10)].map((line) => expect.objectContaining({ seq: line.seq, line: line.line })),
    );
    await node.finish(jobId, "succeeded");

    const { frames } = await openStream(jobId, streamHeaders());
    const { logs, end } = await readToEnd(frames);
    expect(logs.map((event) => event.data.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(logs.map((event) => event.data.line)).toEqual([...batch, ...lines(9, 10)].map((line) => line.line));
    const ids = logs.map((event) => event.id);
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(end).toMatchObject({ state: "succeeded", dropped_lines: 0 });

    // Resuming after any line gives exactly the lines after it.
    for (const [index, { id }] of logs.entries()) {
      const resumed = await openStream(jobId, streamHeaders({ "last-event-id": String(id) }));
      expect((await readToEnd(resumed.frames)).logs.map((event) => event.data.seq)).toEqual(
        logs.slice(index + 1).map((event) => event.data.seq),
      );
    }
  });

  it("sent twice at once, through two log relays, stores each line once, in order", async () => {
    const secondRelay = await startLogRelay(nats.url, { CJS_LOG_MAX_LINES_PER_JOB: String(CAP) });
    try {
      const { node, jobId, push } = await runningJob("logs-twice");
      let accepted = 0;
      let duplicates = 0;
      for (let from = 1; from <= 40; from += 5) {
        const batch = lines(from, from + 4);
        for (const answer of await Promise.all([push(1, batch), push(1, batch)])) {
          accepted += answer.accepted;
          duplicates += answer.duplicates;
        }
      }
      expect({ accepted, duplicates }).toEqual({ accepted: 40, duplicates: 40 });
      expect((await storedLines(jobId)).map((line) => line.seq)).toEqual(lines(1, 40).map((line) => line.seq));
      await node.finish(jobId, "succeeded");
      const { logs } = await readToEnd((await openStream(jobId, streamHeaders())).frames);
      expect(logs.map((event) => event.data.line)).toEqual(lines(1, 40).map((line) => line.line));
    } finally {
      await secondRelay.stop();
    }
  });
});
