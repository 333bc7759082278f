import type { Job, RpcRequest } from "../../shared/contract/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { driveNodes } from "../harness/node-driver.js";
import { RAISED_RATE_LIMITS, RAISED_RATE_LIMITS_NOTE, startBenchSystem } from "./bench-system.js";
import { countErrors, formatErrors, runClosedLoop } from "./load.js";
import { formatMs, formatRate, latencyCells } from "./report.js";
import type { Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { percentiles, perSecond } from "./stats.js";

const POOL = "bench-e2e";
const NODES = 5;
const SLOTS = 20;
const SUBMIT_CLIENTS = 32;
const RETRIEVE_CLIENTS = 16;
const JOB: Omit<RpcRequest<"submitJob">, "name"> = { type: "shell", command: ["true"], pool_id: POOL, resources: { cpu: 0.5, memory_mb: 64, gpu: 0 } };

/** Time between two timeline events of a job, in ms; undefined when either is missing. */
function between(job: Job, from: (state: Job["state"]) => boolean, to: (state: Job["state"]) => boolean): number | undefined {
  const start = job.timeline.find((event) => from(event.state));
  const end = job.timeline.find((event) => to(event.state));
  return start && end ? Date.parse(end.at) - Date.parse(start.at) : undefined;
}

/**
 * Jobs submitted while five fake nodes work: each node long-polls (which starts the
 * attempt), reports success at once and polls again. Two scheduler replicas place the
 * jobs. Measured: jobs/s from the first submit to the last result, and from each job's
 * timeline queued → assigned and submitted → succeeded.
 */
export const endToEnd: Scenario = {
  name: "end-to-end",
  title: "end to end",
  async run({ config, cleanup, progress, signal }: ScenarioContext): Promise<ScenarioOutcome> {
    const jobs = config.jobs;
    const bench = await startBenchSystem(cleanup, progress, { env: { ...RAISED_RATE_LIMITS } });
    const failures: string[] = [];
    try {
      progress.update(`registering ${NODES} nodes`);
      const gateways = bench.system.gateways;
      const nodes = await Promise.all(
        Array.from({ length: NODES }, (_, index) =>
          FakeNode.register(bench.users[0]!, gateways[index % gateways.length]!.baseUrl, bench.tenant.app.app_id, {
            name: `bench-${index}`,
            pool_id: POOL,
            capacity: { cpu: SLOTS, memory_mb: SLOTS * 1024, gpu: 0, slots: SLOTS },
          }),
        ),
      );

      const submitted: string[] = [];
      let allSubmitted = false;
      let finishedSeen = 0;
      let lastFinishAt = 0;
      const timeoutMs = Math.max(60_000, jobs * 100);
      const driver = driveNodes(nodes, {
        slots: SLOTS,
        timeoutMs,
        until: (stats) => {
          if (stats.finished.size !== finishedSeen) {
            finishedSeen = stats.finished.size;
            lastFinishAt = performance.now();
          }
          return allSubmitted && stats.finished.size === submitted.length;
        },
      });
      const stopDriver = cleanup.add("fake nodes", () => driver.stop());

      progress.step(`end to end  ${jobs} jobs, ${NODES} nodes × ${SLOTS} slots`);
      const started = performance.now();
      const ticker = setInterval(() => progress.update(`${submitted.length}/${jobs} submitted, ${driver.stats.finished.size} succeeded`), 250);
      let submitResult;
      try {
        submitResult = await runClosedLoop({ concurrency: SUBMIT_CLIENTS, requests: jobs, signal }, async (index) => {
          const { job_id } = await bench.users[index % bench.users.length]!.call("submitJob", { ...JOB, name: `e2e-${index}` });
          submitted.push(job_id);
        });
        allSubmitted = true;
        if (countErrors(submitResult.errors) > 0) {
          failures.push(`submits failed: ${formatErrors(submitResult.errors)} (${submitResult.errorSamples.join("; ")})`);
          await driver.stop();
        }
        await driver.done;
      } catch (error) {
        failures.push(error instanceof Error ? error.message : String(error));
      } finally {
        clearInterval(ticker);
        await stopDriver();
      }
      const elapsedMs = lastFinishAt - started;
      const finished = driver.stats.finished.size;
      if (driver.stats.unexpected.length > 0) failures.push(`the nodes saw unexpected answers: ${driver.stats.unexpected.slice(0, 5).join("; ")}`);
      if (signal.aborted) failures.push("interrupted");

      progress.step(`end to end  reading ${submitted.length} timelines`);
      const records: Job[] = [];
      const retrieved = await runClosedLoop({ concurrency: RETRIEVE_CLIENTS, requests: submitted.length, signal }, async (index) => {
        const { job } = await bench.users[index % bench.users.length]!.call("retrieveJob", { job_id: submitted[index]! });
        records.push(job);
      });
      if (countErrors(retrieved.errors) > 0) failures.push(`reading timelines failed: ${formatErrors(retrieved.errors)}`);
      const notSucceeded = records.filter((job) => job.state !== "succeeded" || job.attempt !== 1);
      if (notSucceeded.length > 0) {
        failures.push(`${notSucceeded.length} jobs did not succeed in one attempt, e.g. ${notSucceeded.slice(0, 3).map((job) => `${job.job_id} ${job.state} attempt ${job.attempt}`).join(", ")}`);
      }

      const queuedToAssigned = percentiles(records.flatMap((job) => between(job, (state) => state === "queued", (state) => state === "assigned") ?? []));
      const submitToSucceeded = percentiles(records.flatMap((job) => between(job, (state) => state === "queued", (state) => state === "succeeded") ?? []));
      const submitLatency = percentiles(submitResult?.latenciesMs ?? []);
      const rate = perSecond(finished, elapsedMs);
      const submitRate = perSecond(submitResult?.ok ?? 0, submitResult?.elapsedMs ?? 0);
      const retries = Object.fromEntries(driver.stats.retried);

      return {
        tables: [
          {
            title: `end to end (${NODES} fake nodes × ${SLOTS} slots, 2 schedulers, 2 gateways, 2 node registries)`,
            columns: ["jobs", "succeeded", "wall s", "jobs/s", "submit jobs/s"],
            rows: [[String(jobs), String(finished), (elapsedMs / 1000).toFixed(2), formatRate(rate), formatRate(submitRate)]],
            notes: [
              `jobs/s: succeeded jobs over the time from the first submit to the last result; submits (${SUBMIT_CLIENTS} clients) and the nodes run at once`,
              `a fake node runs nothing: its long poll starts the attempt and it reports success at once, so this is the service's own cost per job`,
              `node retries: ${JSON.stringify(retries)}`,
              `rate limits raised: ${RAISED_RATE_LIMITS_NOTE}`,
            ],
          },
          {
            title: "end to end: latency per job",
            columns: ["measure", "p50 ms", "p95 ms", "p99 ms", "max ms"],
            rows: [
              ["queued → assigned (timeline)", ...latencyCells(queuedToAssigned), queuedToAssigned ? formatMs(queuedToAssigned.max) : "–"],
              ["submitted → succeeded (timeline)", ...latencyCells(submitToSucceeded), submitToSucceeded ? formatMs(submitToSucceeded.max) : "–"],
              ["submit request (client)", ...latencyCells(submitLatency), submitLatency ? formatMs(submitLatency.max) : "–"],
            ],
            notes: ["timeline times are the scheduler's clock, to the millisecond; all processes run on this machine"],
          },
        ],
        data: {
          jobs,
          nodes: NODES,
          slots: SLOTS,
          succeeded: finished,
          elapsed_ms: elapsedMs,
          jobs_per_second: rate,
          submit_jobs_per_second: submitRate,
          queued_to_assigned_ms: queuedToAssigned,
          submitted_to_succeeded_ms: submitToSucceeded,
          submit_request_ms: submitLatency,
          node_retries: retries,
        },
        failures,
      };
    } finally {
      progress.step("end to end  stopping services");
      await bench.stop();
    }
  },
};
