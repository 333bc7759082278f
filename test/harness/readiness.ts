/** Reading a service process's `/healthz` and `/readyz`, as a load balancer or an orchestrator would. */
import type { ReadinessReport } from "../../shared/runtime/index.js";
import type { ServiceProcess } from "./service-process.js";
import { TEST_BURST_LIMIT } from "./test-limits.js";

const POLL_INTERVAL_MS = 100;

/** What `/readyz` answered: its status and report, or status 0 while nothing listens (the gateway handing its port over). */
export interface ReadyzAnswer {
  status: number;
  report: ReadinessReport | undefined;
}

/**
 * The base URL of the process's `/healthz` and `/readyz`, from the log line it writes as
 * soon as they listen (before it connects to NATS): the ops server (`CJS_OPS_PORT`) of
 * every service, the gateway's included.
 */
export async function healthUrlOf(child: ServiceProcess, timeoutMs = 30_000): Promise<string> {
  const line = await child.waitForLog(
    (entry) => typeof entry.msg === "string" && entry.msg.includes("serves /healthz and /readyz"),
    timeoutMs,
  );
  if (typeof line.ops !== "string") throw new Error(`${child.name} logged no ops URL: ${JSON.stringify(line)}`);
  return line.ops;
}

export async function readyz(baseUrl: string): Promise<ReadyzAnswer> {
  try {
    const response = await fetch(`${baseUrl}/readyz`);
    return { status: response.status, report: (await response.json()) as ReadinessReport };
  } catch {
    return { status: 0, report: undefined };
  }
}

/** The value of one series (`name{labels}` as Prometheus prints it) on the process's `/metrics`, or undefined when absent. */
export async function metricValue(baseUrl: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split("\n").find((row) => row.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

export async function healthz(baseUrl: string): Promise<number> {
  return (await fetch(`${baseUrl}/healthz`)).status;
}

/**
 * The environment that runs `service` against `natsUrl` with its health endpoints on a free
 * loopback port (read it with `healthUrlOf`) and a JetStream probe quick enough for a test.
 */
export function serviceProcessEnv(service: string, natsUrl: string, replicas: number): Record<string, string> {
  const ops = { CJS_OPS_HOST: "127.0.0.1", CJS_OPS_PORT: "0" };
  const listen: Record<string, string> =
    service === "gateway" ? { CJS_HOST: "127.0.0.1", CJS_PORT: "0", ...TEST_BURST_LIMIT, ...ops } : ops;
  return {
    NATS_URL: natsUrl,
    CJS_NATS_REPLICAS: String(replicas),
    CJS_JETSTREAM_PROBE_INTERVAL_MS: "200",
    LOG_LEVEL: "info",
    ...listen,
  };
}

/**
 * Polls `/readyz` until it answers `status`; past `timeoutMs`, fails with the last report
 * and the process's output, which say what it was waiting for.
 */
export async function untilReadyz(
  child: ServiceProcess,
  baseUrl: string,
  status: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: ReadyzAnswer = { status: 0, report: undefined };
  while (Date.now() < deadline) {
    last = await readyz(baseUrl);
    if (last.status === status) return;
    if (!child.alive()) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
  throw new Error(
    `${child.name} (pid ${child.pid}, ${child.alive() ? "running" : "exited"}) did not answer /readyz ${status} within ${timeoutMs} ms; ` +
      `last answer ${last.status} ${JSON.stringify(last.report)}; its output:\n${child.output()}`,
  );
}
