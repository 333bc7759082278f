import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { logStreamPath } from "../../shared/contract/index.js";
import { STREAMS, subjects } from "../../shared/nats/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import { logLines, runningJobWithLogs } from "../harness/log-jobs.js";
import { openLogStream, readToEnd, tryLogStream } from "../harness/log-stream-client.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startSystemOn,
  type RunningGateway,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

/**
 * Job log streams share the service's consumers on `CJS_LOGS`: many viewers of one job are
 * served by one consumer, each user, signed URL and business has a budget of streams, and
 * a budget used up is a 429 or 503 with `Retry-After`, never a 500. What NATS takes part in
 * (one consumer per job watched, the stream's `max_consumers`) runs on one server and on the
 * 3-node cluster; the per-user, per-URL, rate and per-gateway budgets are counted in the
 * gateway's memory, the same on either, so they run on one server only.
 */
const PER_USER = 4;
const PER_URL = 2;
const MAX_CONSUMERS = 16;
const [ONE_SERVER] = NATS_TOPOLOGIES;

describe.each(NATS_TOPOLOGIES)("log stream budgets, on $name", (topology) => {
  let nats: RunningNats;
  let system: RunningSystem;
  let baseUrl: string;

  async function signedIn() {
    const tenant = await createTenant(system.gateways[0]!.nc);
    const { client, tokens } = await signedInClient(baseUrl, tenant);
    const headers = { "x-app-id": tenant.app.app_id, authorization: `Bearer ${tokens.access_token}` };
    return { tenant, client, headers };
  }

  function runningJob(client: ComputeClient, tenant: Tenant, pool: string) {
    return runningJobWithLogs(client, baseUrl, tenant.app.app_id, pool);
  }

  /** Log streams open on this process's gateways (`cjs_log_streams_open`). */
  async function streamsOpen(): Promise<number> {
    const metric = await metricsRegistry.getSingleMetric("cjs_log_streams_open")?.get();
    return metric?.values.reduce((sum, { value }) => sum + value, 0) ?? 0;
  }

  async function consumersOnLogs(): Promise<number> {
    const jsm = await jetstreamManager(system.gateways[0]!.nc);
    return (await jsm.consumers.list(STREAMS.logs).next()).length;
  }

  /** Consumers of `CJS_LOGS` filtered on this job's lines. */
  async function consumersOfJob(jobId: string): Promise<number> {
    const jsm = await jetstreamManager(system.gateways[0]!.nc);
    const consumers = await jsm.consumers.list(STREAMS.logs).next();
    return consumers.filter(({ config }) => config.filter_subject === subjects.jobLogsOfJob(jobId)).length;
  }

  beforeAll(async () => {
    ({ nats, system } = await startSystemOn(
      topology,
      { gateways: 1, schedulers: 1, registries: 1 },
      {
        CJS_LOG_STREAMS_PER_USER: String(PER_USER),
        CJS_LOG_STREAMS_PER_URL: String(PER_URL),
        CJS_LOGS_MAX_CONSUMERS: String(MAX_CONSUMERS),
      },
    ));
    baseUrl = system.gateways[0]!.baseUrl;
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
    await nats?.stop();
  });

  describe("viewers of one job", () => {
    it("are served by one consumer, each gets every line once, and one far behind the live lines catches up from the stream", async () => {
      const { tenant, client, headers } = await signedIn();
      const { node, jobId, push } = await runningJob(client, tenant, "budgets-fanout");
      const viewers = await Promise.all(
        Array.from({ length: PER_USER - 1 }, () => openLogStream(baseUrl, logStreamPath(jobId), headers)),
      );
      expect(await consumersOnLogs()).toBe(1);
      // About 1.2 MB of lines, past what the job's feed keeps for its viewers.
      for (let from = 1; from <= 1_200; from += 100)
        await push(
          1,
          logLines(from, from + 99, (seq) => `${seq} ${"x".repeat(1_000)}`),
        );
      const late = await openLogStream(baseUrl, logStreamPath(jobId), headers);
      expect(await consumersOnLogs()).toBe(1);
      await push(1, logLines(1_201, 1_210));
      await node.finish(jobId, "succeeded");
      for (const viewer of [...viewers, late]) {
        const { logs, end } = await readToEnd(viewer.frames);
        expect(logs.map((event) => event.data.seq)).toEqual(Array.from({ length: 1_210 }, (_, index) => index + 1));
        expect(end.state).toBe("succeeded");
      }
      await expect.poll(consumersOnLogs, { timeout: 10_000 }).toBe(0);
    });

    /** A job whose log is streamed through a gateway of its own, which holds the job's one consumer. */
    async function streamedThroughOwnGateway(gateway: RunningGateway, pool: string): Promise<string> {
      const { tenant, client } = await signedIn();
      const { tokens } = await signedInClient(gateway.baseUrl, tenant);
      const headers = { "x-app-id": tenant.app.app_id, authorization: `Bearer ${tokens.access_token}` };
      const { jobId } = await runningJob(client, tenant, pool);
      await openLogStream(gateway.baseUrl, logStreamPath(jobId), headers);
      expect(await consumersOfJob(jobId)).toBe(1);
      return jobId;
    }

    it("a gateway stopping with a job's stream open has deleted the job's consumer when it has stopped", async () => {
      const gateway = await startGateway(nats.url);
      let stopped = false;
      try {
        const jobId = await streamedThroughOwnGateway(gateway, "budgets-stop");
        await gateway.stop();
        stopped = true;
        expect(await consumersOfJob(jobId)).toBe(0);
      } finally {
        if (!stopped) await gateway.stop();
      }
    });

    it("a job's consumer left behind by a gateway whose connection died goes by itself, not after the five minutes of an ordered consumer", async () => {
      const gateway = await startGateway(nats.url);
      try {
        const jobId = await streamedThroughOwnGateway(gateway, "budgets-died");
        // As a gateway killed: nothing it sends reaches the server any more, its deletions neither.
        await gateway.nc.close();
        await expect.poll(() => consumersOfJob(jobId), { timeout: 30_000, interval: 1_000 }).toBe(0);
      } finally {
        await gateway.stop().catch(() => undefined);
      }
    });
  });

  // Counted in the gateway's memory whatever NATS runs below it: once is enough.
  if (topology === ONE_SERVER)
    describe("the stream budgets", () => {
      it("past the user's streams, the next is 429 logs.stream_limit_reached with Retry-After, and one closed makes room", async () => {
        const { tenant, client, headers } = await signedIn();
        const { jobId } = await runningJob(client, tenant, "budgets-user");
        const open = await Promise.all(
          Array.from({ length: PER_USER }, () => openLogStream(baseUrl, logStreamPath(jobId), headers)),
        );
        const refused = await tryLogStream(baseUrl, logStreamPath(jobId), headers);
        expect(refused.response.statusCode).toBe(429);
        expect(refused.response.headers["retry-after"]).toBe("5");
        expect(JSON.parse(refused.body)).toMatchObject({
          code: "logs.stream_limit_reached",
          details: { limit: "per_user", max: PER_USER },
        });
        open[0]!.disconnect();
        await expect
          .poll(async () => {
            const attempt = await tryLogStream(baseUrl, logStreamPath(jobId), headers);
            attempt.disconnect();
            return attempt.response.statusCode;
          })
          .toBe(200);
        for (const stream of open) stream.disconnect();
      });

      it("a signed URL opens at most its own number of streams, while its user may open more otherwise", async () => {
        const { tenant, client } = await signedIn();
        const { jobId } = await runningJob(client, tenant, "budgets-url");
        const { url } = await client.call("logStreamUrl", { job_id: jobId });
        const open = [await openLogStream(baseUrl, url), await openLogStream(baseUrl, url)];
        const refused = await tryLogStream(baseUrl, url);
        expect(refused.response.statusCode).toBe(429);
        expect(JSON.parse(refused.body)).toMatchObject({
          code: "logs.stream_limit_reached",
          details: { limit: "per_url", max: PER_URL },
        });
        // The user's own budget is not used up: with a credential, the user opens more.
        const { tokens } = await signedInClient(baseUrl, tenant);
        open.push(
          await openLogStream(baseUrl, logStreamPath(jobId), {
            "x-app-id": tenant.app.app_id,
            authorization: `Bearer ${tokens.access_token}`,
          }),
        );
        for (const stream of open) stream.disconnect();
      });

      it("opening through a signed URL counts against its user's rate limit", async () => {
        const gateway = await startGateway(nats.url, {
          CJS_RATE_LIMIT_PER_MINUTE: "5",
          CJS_LOG_STREAMS_PER_URL: "100",
        });
        try {
          const { tenant, client } = await signedIn();
          const { jobId } = await runningJob(client, tenant, "budgets-rate");
          const { client: limited } = await signedInClient(gateway.baseUrl, tenant);
          // Registering the node and submitting the job were two requests, asking for the URL a third; two streams opened with it make the minute's five.
          const { url } = await limited.call("logStreamUrl", { job_id: jobId });
          const open = [await openLogStream(gateway.baseUrl, url), await openLogStream(gateway.baseUrl, url)];
          const refused = await tryLogStream(gateway.baseUrl, url);
          expect(refused.response.statusCode).toBe(429);
          expect(JSON.parse(refused.body)).toMatchObject({ code: "rate.limited", details: { window: "minute" } });
          for (const stream of open) stream.disconnect();
        } finally {
          await gateway.stop();
        }
      });

      it("a job's feed nobody watches any more gives its place up at once to another job's stream", async () => {
        const gateway = await startGateway(nats.url, { CJS_LOG_STREAM_JOBS_MAX: "1" });
        try {
          const { tenant, client } = await signedIn();
          const { tokens } = await signedInClient(gateway.baseUrl, tenant);
          const headers = { "x-app-id": tenant.app.app_id, authorization: `Bearer ${tokens.access_token}` };
          const jobs = await Promise.all([1, 2].map((index) => runningJob(client, tenant, `budgets-idle-${index}`)));
          const before = await streamsOpen();
          const first = await openLogStream(gateway.baseUrl, logStreamPath(jobs[0]!.jobId), headers);
          first.disconnect();
          // The first job's viewer is gone; its feed stays a few seconds for a viewer coming back.
          await expect.poll(streamsOpen).toBe(before);
          const second = await openLogStream(gateway.baseUrl, logStreamPath(jobs[1]!.jobId), headers);
          second.disconnect();
        } finally {
          await gateway.stop();
        }
      });

      it("past the jobs one gateway may stream, another job's stream is 503 service.unavailable with Retry-After", async () => {
        const gateway = await startGateway(nats.url, { CJS_LOG_STREAM_JOBS_MAX: "2" });
        try {
          const { tenant, client } = await signedIn();
          const { tokens } = await signedInClient(gateway.baseUrl, tenant);
          const headers = { "x-app-id": tenant.app.app_id, authorization: `Bearer ${tokens.access_token}` };
          const jobs = await Promise.all([1, 2, 3].map((index) => runningJob(client, tenant, `budgets-jobs-${index}`)));
          const open = [
            await openLogStream(gateway.baseUrl, logStreamPath(jobs[0]!.jobId), headers),
            await openLogStream(gateway.baseUrl, logStreamPath(jobs[1]!.jobId), headers),
            // A second viewer of a job already watched takes no consumer of its own.
            await openLogStream(gateway.baseUrl, logStreamPath(jobs[0]!.jobId), headers),
          ];
          const refused = await tryLogStream(gateway.baseUrl, logStreamPath(jobs[2]!.jobId), headers);
          expect(refused.response.statusCode).toBe(503);
          expect(refused.response.headers["retry-after"]).toBe("5");
          expect(JSON.parse(refused.body)).toMatchObject({
            code: "service.unavailable",
            details: { reason: "log_stream_jobs" },
          });
          for (const stream of open) stream.disconnect();
        } finally {
          await gateway.stop();
        }
      });
    });

  // Last: the consumers it leaves behind hold the stream's budget until the server drops them.
  describe("the stream's consumer budget", () => {
    it("when the log stream's consumer budget (max_consumers) is spent, a stream is 503 service.unavailable, never a 500", async () => {
      const { tenant, client, headers } = await signedIn();
      const { jobId } = await runningJob(client, tenant, "budgets-consumers");
      // Another party holds every consumer the stream admits (CJS_LOGS_MAX_CONSUMERS, 16).
      const holder = await connect({ servers: nats.url.split(",") });
      const js = jetstream(holder);
      try {
        // Feeds of the earlier tests' gateways are deleted after their viewers leave (or reaped by
        // the server): counted now and gone a moment later, they would leave a place free.
        await expect.poll(consumersOnLogs, { timeout: 15_000 }).toBe(0);
        for (let index = 0; index < MAX_CONSUMERS; index += 1)
          await (await js.consumers.get(STREAMS.logs, { filter_subjects: subjects.jobLogsAll() })).consume();
        const refused = await tryLogStream(baseUrl, logStreamPath(jobId), headers);
        expect(refused.response.statusCode).toBe(503);
        expect(refused.response.headers["retry-after"]).toBe("5");
        expect(JSON.parse(refused.body)).toMatchObject({
          code: "service.unavailable",
          details: { reason: "log_consumers" },
        });
      } finally {
        await holder.close();
      }
    });
  });
});
