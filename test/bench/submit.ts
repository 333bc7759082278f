import { freePort } from "../harness/free-port.js";
import { startBenchProcess } from "./bench-process.js";
import { comparisonTable, figureData, type Figure } from "./compare.js";
import { countErrors, formatErrors, runClosedLoop } from "./load.js";
import { RAISED_RATE_LIMITS_NOTE, startOurSystem, type OurSystem } from "./ours/system.js";
import { cpuSince, cpuSnapshot, type ProcessRef } from "./proc-stats.js";
import type { Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { percentile } from "./stats.js";
import { SUBMITTERS, ourJob } from "./workload.js";

const CLIENTS = [1, SUBMITTERS] as const;
const SELF_HOSTED_POOL = "submit-self";
/** An operator pool: every submit to it asks billing for the business's credit first. */
const OPERATOR_POOL = "default";
const READY_TIMEOUT_MS = 60_000;

type Target = "self" | "operator" | "bare";

interface Window {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU ms per 1000 submits: the HTTP process alone (gateway, or the bare server), and every server process. */
  httpCpuPer1000: number;
  serversCpuPer1000: number;
}

/**
 * (f): `jobs/submit` through our gateway against a bare fastify route, in a process of
 * its own on the same nats-server, that does one JetStream publish per request. Closed
 * loops of 1 and 32 clients. No node serves either pool: our jobs stay queued.
 */
export const submit: Scenario = {
  name: "submit",
  title: "submit against a bare publish",
  async run(context: ScenarioContext): Promise<ScenarioOutcome> {
    const { config, cleanup, progress, signal } = context;
    const failures: string[] = [];
    progress.step("submit  starting our system");
    const ours: OurSystem = await startOurSystem(cleanup, progress, { logLevel: config.serviceLogLevel });
    const windows = new Map<number, Record<Target, Window[]>>(
      CLIENTS.map((clients) => [clients, { self: [], operator: [], bare: [] }]),
    );
    let stopBare: (() => Promise<void>) | undefined;
    try {
      progress.step("submit  starting the bare publish server");
      const port = await freePort();
      const bare = startBenchProcess("bare publish server", "test/bench/bare-submit/main.ts", {
        NATS_URL: ours.natsUrl,
        BENCH_PORT: String(port),
      });
      stopBare = cleanup.add("bare publish server", () => bare.stop());
      const ready = new Promise<void>((resolve) => bare.onMessage(() => resolve()));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        ready,
        bare.died,
        new Promise<never>(
          (_, reject) =>
            (timer = setTimeout(
              () => reject(new Error(`the bare publish server was not ready within ${READY_TIMEOUT_MS} ms`)),
              READY_TIMEOUT_MS,
            )),
        ),
      ]).finally(() => clearTimeout(timer));
      const bareUrl = `http://127.0.0.1:${port}/submit`;

      const gateway = ours.processes.find((ref) => ref.name === "gateway")!;
      const nats = ours.processes.find((ref) => ref.name === "nats-server")!;
      const servers: Record<Target, ProcessRef[]> = {
        self: ours.processes,
        operator: ours.processes,
        bare: [{ name: "bare", pid: bare.pid }, nats],
      };
      const http: Record<Target, string> = { self: gateway.name, operator: gateway.name, bare: "bare" };
      const send: Record<Target, (index: number) => Promise<unknown>> = {
        self: (index) => ours.user.call("submitJob", ourJob(SELF_HOSTED_POOL, index)),
        operator: (index) => ours.user.call("submitJob", ourJob(OPERATOR_POOL, index)),
        bare: async (index) => {
          const response = await fetch(bareUrl, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(ourJob(SELF_HOSTED_POOL, index)),
          });
          const body = (await response.json()) as { status?: string };
          if (!response.ok || body.status !== "SUCCESS") throw new Error(`the bare server answered ${response.status}`);
        },
      };

      const window = async (target: Target, clients: number, label: string): Promise<Window | undefined> => {
        progress.step(`submit  ${label}: ${describeTarget(target)}, ${clients} client${clients === 1 ? "" : "s"}`);
        const before = cpuSnapshot(servers[target]);
        // The warm-up runs inside the loop; CPU is read over all of it, so count its requests too.
        let sent = 0;
        const result = await runClosedLoop(
          {
            concurrency: clients,
            warmupMs: config.warmupMs,
            durationMs: config.windowMs,
            signal,
            onProgress: ({ ok }) => progress.update(`${ok} accepted`),
          },
          (index) => {
            sent += 1;
            return send[target](index);
          },
        );
        const cpu = cpuSince(before, servers[target]);
        if (countErrors(result.errors) > 0) {
          failures.push(
            `${label}, ${describeTarget(target)} with ${clients} clients: ${formatErrors(result.errors)} (${result.errorSamples.join("; ")})`,
          );
          return undefined;
        }
        const sorted = [...result.latenciesMs].sort((a, b) => a - b);
        const total = [...cpu.values()].reduce((sum, ms) => sum + ms, 0);
        return {
          perSecond: (result.ok * 1000) / result.elapsedMs,
          p50Ms: percentile(sorted, 50),
          p99Ms: percentile(sorted, 99),
          httpCpuPer1000: (cpu.get(http[target])! * 1000) / sent,
          serversCpuPer1000: (total * 1000) / sent,
        };
      };

      for (const target of ["self", "operator", "bare"] as const) {
        if (!signal.aborted && !(await window(target, SUBMITTERS, "warm-up")))
          throw new Error(`the warm-up window on ${describeTarget(target)} did not complete`);
      }
      for (let round = 1; round <= config.rounds && !signal.aborted; round++) {
        const order: Target[] = round % 2 === 1 ? ["self", "bare", "operator"] : ["operator", "bare", "self"];
        for (const clients of CLIENTS) {
          const results = new Map<Target, Window | undefined>();
          for (const target of order)
            results.set(
              target,
              signal.aborted ? undefined : await window(target, clients, `round ${round}/${config.rounds}`),
            );
          if (order.every((target) => results.get(target)))
            for (const target of order) windows.get(clients)![target].push(results.get(target)!);
        }
      }
    } finally {
      progress.step("submit  stopping");
      await stopBare?.();
      await ours.stop();
    }

    const figures: Figure[] = CLIENTS.flatMap((clients) => {
      const byTarget = windows.get(clients)!;
      const against = (target: "self" | "operator", key: keyof Window) => ({
        ours: byTarget[target].map((w) => w[key]),
        theirs: byTarget.bare.map((w) => w[key]),
      });
      const who = `${clients} client${clients === 1 ? "" : "s"}`;
      return [
        { label: `${who}: submits/s`, ...against("self", "perSecond") },
        { label: `${who}: submit p50 ms`, ...against("self", "p50Ms") },
        { label: `${who}: submit p99 ms`, ...against("self", "p99Ms") },
        { label: `${who}: HTTP process CPU ms per 1000`, ...against("self", "httpCpuPer1000") },
        { label: `${who}: server CPU ms per 1000`, ...against("self", "serversCpuPer1000") },
        { label: `${who}, operator pool: submits/s`, ...against("operator", "perSecond") },
        { label: `${who}, operator pool: submit p50 ms`, ...against("operator", "p50Ms") },
      ];
    });
    return {
      tables: [
        comparisonTable(
          "(f) our gateway's jobs/submit against a bare fastify route doing one JetStream publish",
          "bare",
          figures,
          [
            `${windows.get(SUBMITTERS)!.bare.length} rounds; in each, for 1 and for ${SUBMITTERS} clients, a ${config.windowMs / 1000} s window (after ${config.warmupMs / 1000} s unmeasured) on our self-hosted pool, on the bare route and on our operator pool, in alternating order`,
            "bare: fastify without a logger, POST /submit → js.publish of the body to a file-stored stream → the ack's sequence as the job id; no authentication, no validation, no record; its own process on our nats-server",
            `ours: a user API key; self-hosted pool "${SELF_HOSTED_POOL}" (no credit check), operator pool "${OPERATOR_POOL}" (the scheduler asks billing for credit); no node serves either, so the jobs stay queued and the scheduler holds each`,
            "HTTP process CPU: the gateway, or the bare server; server CPU: every service and nats-server, or the bare server and nats-server; per 1000 requests sent in the window and its warm-up",
            "the same clients both ways: Node's fetch, JSON in and out",
            RAISED_RATE_LIMITS_NOTE,
          ],
        ),
      ],
      data: { figures: figures.map(figureData), windows: Object.fromEntries(windows) },
      failures,
    };
  },
};

function describeTarget(target: Target): string {
  return target === "self" ? "ours, self-hosted pool" : target === "operator" ? "ours, operator pool" : "bare publish";
}
