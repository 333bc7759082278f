import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { pino } from "pino";
import { BUCKETS, CONSUMERS, encodeJson, STREAMS, subjects } from "../../shared/nats/index.js";
import { newId, newJobId, systemClock } from "../../shared/runtime/index.js";
import { openCreditLedger } from "../../services/billing/ledger/index.js";
import { jobKey, tagJobId } from "../../shared/records/index.js";
import { queuedJobRecord } from "../harness/job-records.js";
import { startServiceProcess } from "../harness/service-process.js";
import { startOurSystem } from "./ours/system.js";
import { formatMs, formatRate } from "./report.js";
import type { Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";

/** Attempts of one business ending each second, for LOAD_SECONDS. */
const RATE_PER_SECOND = 500;
const LOAD_SECONDS = { quick: 20, full: 60 } as const;
/** The backlog is read this often. */
const SAMPLE_MS = 250;
/** A drain that takes longer than this is reported as not done. */
const DRAIN_TIMEOUT_MS = 300_000;
const APP = "bench-billing";

interface Sample {
  atMs: number;
  backlog: number;
}

/**
 * (billing) One business's attempts ending at 500 a second, as its charges reach billing:
 * each is a job record (an ended attempt on an operator pool) and its metering message,
 * written straight into NATS at that rate; two billing replicas (processes) charge them.
 * Measured: the backlog of charges not yet made while the load runs, its peak in charges
 * and in seconds of load, and how long it takes to drain once the load stops. The
 * credit check's balance lags by that backlog. Every charge must be made exactly once.
 */
export const billingBacklog: Scenario = {
  name: "billing-backlog",
  title: "billing backlog",
  async run(context: ScenarioContext): Promise<ScenarioOutcome> {
    const { config, cleanup, progress, signal } = context;
    const failures: string[] = [];
    progress.step("billing backlog  starting our system and a second billing replica");
    const ours = await startOurSystem(cleanup, progress, { logLevel: config.serviceLogLevel });
    const second = startServiceProcess({
      service: "billing",
      env: { NATS_URL: ours.natsUrl, LOG_LEVEL: config.serviceLogLevel, CJS_OPS_HOST: "127.0.0.1", CJS_OPS_PORT: "0" },
    });
    const stopSecond = cleanup.add("second billing replica", () => second.stop());
    const samples: Sample[] = [];
    let published = 0;
    let charged = 0;
    let loadMs = 0;
    let drainMs: number | undefined;
    try {
      await second.waitForLog((line) => line.msg === "billing ready", 60_000);
      const { nc } = ours;
      const js = jetstream(nc);
      const jsm = await jetstreamManager(nc);
      const jobs = await new Kvm(nc).open(BUCKETS.jobs);
      const businessId = newId("biz");
      const backlog = async () => {
        const info = await jsm.consumers.info(STREAMS.metering, CONSUMERS.billingMetering);
        return info.num_pending + info.num_ack_pending;
      };

      const seconds = LOAD_SECONDS[config.size];
      progress.step(`billing backlog  ${RATE_PER_SECOND} ended attempts a second of one business for ${seconds} s`);
      const started = performance.now();
      let sampling = true;
      const sampler = (async () => {
        while (sampling && !signal.aborted) {
          samples.push({ atMs: performance.now() - started, backlog: await backlog() });
          progress.update(`${published} published, backlog ${samples.at(-1)!.backlog}`);
          await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
        }
      })();
      // Each 10 ms its share of the rate, so the load is even within each second.
      const perTick = RATE_PER_SECOND / 100;
      for (let tick = 0; tick < seconds * 100 && !signal.aborted; tick += 1) {
        const due = started + tick * 10;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        await Promise.all(
          Array.from({ length: perTick }, async () => {
            const jobId = tagJobId(newJobId(Date.now()), "operator");
            const endedAt = new Date().toISOString();
            const startedAt = new Date(Date.now() - 1_000).toISOString();
            const record = queuedJobRecord({
              job_id: jobId,
              app_id: APP,
              business_id: businessId,
              state: "succeeded",
              attempt: 1,
              exit_code: 0,
              timeline: [
                { at: startedAt, state: "queued", attempt: 0, reason: "submitted", node_id: null },
                { at: startedAt, state: "assigned", attempt: 1, reason: "placed", node_id: null },
                { at: startedAt, state: "running", attempt: 1, reason: "started", node_id: null },
                { at: endedAt, state: "succeeded", attempt: 1, reason: "result", node_id: null },
              ],
            });
            const key = jobKey(APP, businessId, jobId);
            await jobs.put(key, encodeJson(record));
            await js.publish(
              subjects.metering(jobId),
              encodeJson({ job_key: key, job_id: jobId, attempt: 1, reason: "result" }),
            );
            published += 1;
          }),
        );
      }
      loadMs = performance.now() - started;
      progress.step("billing backlog  draining");
      const drainStarted = performance.now();
      while (!signal.aborted && performance.now() - drainStarted < DRAIN_TIMEOUT_MS) {
        if ((await backlog()) === 0) {
          drainMs = performance.now() - drainStarted;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      sampling = false;
      await sampler;
      if (drainMs === undefined) failures.push(`the backlog did not drain within ${DRAIN_TIMEOUT_MS / 1000} s`);

      progress.update("counting the ledger's entries");
      const ledger = await openCreditLedger(nc, { replicas: 1, clock: systemClock, logger: pino({ level: "silent" }) });
      const account = { app_id: APP, business_id: businessId };
      const period = { start: "2000-01-01T00:00:00.000Z", end: "2100-01-01T00:00:00.000Z", included_credit: 0 };
      const debited = new Set<string>();
      for (let cursor: string | undefined, first = true; first || cursor !== undefined; first = false) {
        const page = await ledger.list(account, period, { limit: 200, cursor });
        for (const entry of page.items) if (entry.kind === "debit" && entry.job_id) debited.add(entry.job_id);
        charged += page.items.filter((entry) => entry.kind === "debit").length;
        cursor = page.next_cursor ?? undefined;
      }
      if (charged !== published || debited.size !== published)
        failures.push(`${published} attempts ended, ${charged} debits recorded for ${debited.size} distinct jobs`);
    } finally {
      progress.step("billing backlog  stopping");
      await stopSecond();
      await ours.stop();
    }

    const peak = samples.reduce((most, sample) => Math.max(most, sample.backlog), 0);
    const steady = samples.filter((sample) => sample.atMs > 5_000 && sample.atMs <= loadMs);
    const steadyPeak = steady.reduce((most, sample) => Math.max(most, sample.backlog), 0);
    const offered = (published * 1000) / Math.max(1, loadMs);
    return {
      tables: [
        {
          title: `billing backlog: ${RATE_PER_SECOND} ended attempts a second of one business, two billing replicas`,
          columns: ["figure", "value"],
          rows: [
            ["attempts ended (published)", String(published)],
            ["offered rate, per second", formatRate(offered)],
            ["backlog peak, charges", String(peak)],
            ["backlog peak after the first 5 s, charges", String(steadyPeak)],
            ["backlog peak after the first 5 s, seconds of load", (steadyPeak / RATE_PER_SECOND).toFixed(2)],
            ["drain after the load stopped, ms", drainMs === undefined ? "did not drain" : formatMs(drainMs)],
            ["debits recorded", String(charged)],
          ],
          notes: [
            "each attempt is a job record written into cjs_jobs and its metering message published to CJS_METERING, as the scheduler does when an attempt ends; no scheduler, node or gateway is in the loop",
            `the backlog is the billing-metering consumer's pending plus unacknowledged messages, read every ${SAMPLE_MS} ms: how many charges the submit's credit check does not see yet`,
          ],
        },
      ],
      data: { published, charged, loadMs, drainMs, peak, steadyPeak, samples },
      failures,
    };
  },
};
