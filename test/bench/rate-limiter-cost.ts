import type { NatsConnection } from "@nats-io/transport-node";
import type { ComputeClient } from "../../shared/client/index.js";
import { loadClient } from "./ours/load-client.js";
import { requestRpc } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { signedInClient, type Tenant } from "../harness/system.js";
import { startOurSystem } from "./ours/system.js";
import { countErrors, formatErrors, runClosedLoop, type LoadResult } from "./load.js";
import { formatRate, latencyCells } from "./report.js";
import type { Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { percentiles, perSecond, type Percentiles } from "./stats.js";

const POOL = "bench-limits";
const CONCURRENCY = 16;
const WARMUP_REQUESTS = 200;
/**
 * The default `CJS_RATE_LIMIT_PER_MINUTE` is 1000: each user stays well under it. The
 * closed loop sends each user more than the default 50 a second, so the burst bound is
 * raised here: the cost measured is the counting, the same whichever window binds.
 */
const REQUESTS_PER_USER = 800;
const MIN_USERS = 8;

type Side = "counted" | "uncounted";

interface SideTotals {
  ok: number;
  elapsedMs: number;
  latenciesMs: number[];
  errors: Map<string, number>;
  errorSamples: string[];
  /** req/s of each round, for the spread of the ratio. */
  roundRates: number[];
}

function emptyTotals(): SideTotals {
  return { ok: 0, elapsedMs: 0, latenciesMs: [], errors: new Map(), errorSamples: [], roundRates: [] };
}

function addPhase(totals: SideTotals, result: LoadResult): void {
  totals.ok += result.ok;
  totals.elapsedMs += result.elapsedMs;
  totals.latenciesMs.push(...result.latenciesMs);
  for (const [code, count] of result.errors) totals.errors.set(code, (totals.errors.get(code) ?? 0) + count);
  totals.errorSamples.push(...result.errorSamples.slice(0, 3 - totals.errorSamples.length));
  totals.roundRates.push(perSecond(result.ok, result.elapsedMs));
}

/** Another member of the tenant's business, made with the operator command, as `createTenant` makes the first. */
async function createUser(nc: NatsConnection, tenant: Tenant): Promise<Tenant> {
  const password = `pw-${randomBase62(20)}`;
  const user = await requestRpc(nc, "adminUserCreate", {
    app_id: tenant.app.app_id,
    business_id: tenant.business.business_id,
    email: `bench-${randomBase62(10).toLowerCase()}@example.test`,
    password,
    role: "admin",
  });
  return { ...tenant, user, password };
}

function ratio(a: number | undefined, b: number | undefined): string {
  return a !== undefined && b !== undefined && b > 0 ? (a / b).toFixed(2) : "–";
}

/**
 * What counting a request in the per-user limiter costs, with the default limits: the same
 * request (`nodes/drain` with `draining: false` on a node that is not draining, a read in
 * the node registry and no write) sent with users' API keys, which the limiter counts
 * (a compare-and-set of the user's counter in `cjs_rate_limits` before the request is
 * served), and with the node's own key, which it does not. Both credentials are API keys,
 * so authentication is the same path. Phases alternate (ABBA) within one run, so drift of
 * a shared machine falls on both sides; the ratio is the result, not the absolute numbers.
 */
export const rateLimiterCost: Scenario = {
  name: "rate-limiter",
  title: "rate-limiter cost",
  async run({ config, cleanup, progress, signal }: ScenarioContext): Promise<ScenarioOutcome> {
    progress.step("rate-limiter cost  starting our system");
    const ours = await startOurSystem(cleanup, progress, {
      logLevel: config.serviceLogLevel,
      rateLimits: "default",
      // The node's own budget (an in-memory bucket, decision 0091) raised too: a drain is one of its control calls.
      env: {
        gateway: {
          CJS_RATE_LIMIT_PER_SECOND: "1000000",
          CJS_NODE_RATE_LIMIT_PER_SECOND: "1000000",
          CJS_NODE_CONTROL_RATE_LIMIT_PER_SECOND: "1000000",
        },
      },
    });
    const failures: string[] = [];
    const totals: Record<Side, SideTotals> = { counted: emptyTotals(), uncounted: emptyTotals() };
    const countedRequests = WARMUP_REQUESTS + config.rounds * config.requestsPerRound;
    const userCount = Math.max(MIN_USERS, Math.ceil(countedRequests / REQUESTS_PER_USER));
    try {
      const baseUrl = ours.gatewayUrl;
      const appId = ours.tenant.app.app_id;
      progress.update(`registering a node and ${userCount} users with API keys`);
      const node = await FakeNode.register(ours.user, baseUrl, appId, { name: "limits", pool_id: POOL });
      const nodeKey = (await ours.user.call("rotateNodeKey", { node_id: node.nodeId })).api_key;
      const userKeys = await Promise.all(
        Array.from({ length: userCount }, async (_, index) => {
          const member = await createUser(ours.nc, ours.tenant);
          const { client } = await signedInClient(baseUrl, member);
          return (await client.call("createApiKey", { name: `bench-${index}` })).key;
        }),
      );
      const clients: Record<Side, ComputeClient[]> = {
        counted: userKeys.map((apiKey) => loadClient({ baseUrl, appId, apiKey })),
        uncounted: [loadClient({ baseUrl, appId, apiKey: nodeKey })],
      };
      const body = { node_id: node.nodeId, draining: false };

      const phase = (side: Side, requests: number, label: string) => {
        progress.step(
          `rate-limiter cost  ${label}: ${side === "counted" ? "user API keys (counted)" : "node key (not counted)"}`,
        );
        const pool = clients[side];
        return runClosedLoop(
          {
            concurrency: CONCURRENCY,
            requests,
            signal,
            onProgress: ({ ok, failed, elapsedMs }) =>
              progress.update(`${ok}/${requests}, ${failed} failed, ${formatRate(perSecond(ok, elapsedMs))} req/s`),
          },
          (index) => pool[index % pool.length]!.call("drainNode", body),
        );
      };

      for (const side of ["counted", "uncounted"] as const) {
        const warm = await phase(side, WARMUP_REQUESTS, "warm-up");
        if (countErrors(warm.errors) > 0)
          failures.push(`warm-up, ${side}: ${formatErrors(warm.errors)} (${warm.errorSamples.join("; ")})`);
      }
      for (let round = 0; round < config.rounds && !signal.aborted; round++) {
        const order: Side[] = round % 2 === 0 ? ["counted", "uncounted"] : ["uncounted", "counted"];
        for (const side of order)
          addPhase(totals[side], await phase(side, config.requestsPerRound, `round ${round + 1}/${config.rounds}`));
      }
    } finally {
      progress.step("rate-limiter cost  stopping services");
      await ours.stop();
    }

    const summary = (side: Side) => {
      const { ok, elapsedMs, latenciesMs, errors } = totals[side];
      return {
        requests: ok,
        requests_per_second: perSecond(ok, elapsedMs),
        latency_ms: percentiles(latenciesMs),
        errors,
        round_rates: totals[side].roundRates,
      };
    };
    const counted = summary("counted");
    const uncounted = summary("uncounted");
    for (const side of ["counted", "uncounted"] as const) {
      if (countErrors(totals[side].errors) > 0)
        failures.push(
          `${side} requests failed: ${formatErrors(totals[side].errors)} (${totals[side].errorSamples.join("; ")})`,
        );
    }
    const roundRatios = counted.round_rates
      .map((rate, index) => rate / (uncounted.round_rates[index] ?? Number.NaN))
      .filter(Number.isFinite);
    const latencyRatio = (key: keyof Percentiles) => ratio(counted.latency_ms?.[key], uncounted.latency_ms?.[key]);
    const row = (label: string, side: ReturnType<typeof summary>) => [
      label,
      String(side.requests),
      formatRate(side.requests_per_second),
      ...latencyCells(side.latency_ms),
      formatErrors(side.errors),
    ];

    return {
      tables: [
        {
          title:
            "rate-limiter cost (POST /api/compute/nodes/drain, draining false, same request both ways, default limits)",
          columns: ["credential", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors"],
          rows: [
            row(`${userCount} users' API keys (counted)`, counted),
            row("the node's key (not counted)", uncounted),
            [
              "counted ÷ not counted",
              "",
              ratio(counted.requests_per_second, uncounted.requests_per_second),
              latencyRatio("p50"),
              latencyRatio("p95"),
              latencyRatio("p99"),
              "",
            ],
          ],
          notes: [
            `${config.rounds} rounds of ${config.requestsPerRound} requests per side, ${CONCURRENCY} in flight, phases in ABBA order after ${WARMUP_REQUESTS} warm-up requests per side; one gateway process, the services and nats-server each in a process of their own`,
            `req/s ratio per round: ${roundRatios.map((value) => value.toFixed(2)).join(", ") || "–"} (the spread is this machine's noise)`,
            `default minute and hour limits (1000 a minute, 30000 an hour per user; the burst bound of 50 a second raised, CJS_RATE_LIMIT_PER_SECOND=1000000): each user sends at most ${Math.ceil(countedRequests / userCount)} requests, so none is refused`,
            "a ratio below 1 for req/s (above 1 for latency) is what counting costs: one KV read and one compare-and-set per batch of a user's requests",
          ],
        },
      ],
      data: { counted, uncounted, users: userCount, concurrency: CONCURRENCY, round_ratios: roundRatios },
      failures,
    };
  },
};
