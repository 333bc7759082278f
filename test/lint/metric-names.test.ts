import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// Importing the services registers every metric they define (they are defined at import, once per process).
import "../../services/billing/billing.js";
import "../../services/gateway/gateway.js";
import "../../services/log-relay/log-relay.js";
import "../../services/node-registry/node-registry.js";
import "../../services/scheduler/scheduler.js";
import "../../services/webhooks/webhooks.js";
import "../../shared/nats/index.js";
import { collectProcessMetrics, metricsRegistry } from "../../shared/runtime/index.js";
import { promtool } from "../harness/promtool.js";

const DEPLOY = join(import.meta.dirname, "../../deploy");
const DASHBOARDS = join(DEPLOY, "grafana/dashboards");

/** The series names each registered metric exposes: a histogram's `_bucket`, `_sum` and `_count` besides its name. */
async function exposedNames(): Promise<Set<string>> {
  collectProcessMetrics();
  const names = new Set<string>();
  for (const metric of await metricsRegistry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (["histogram", "summary"].includes(String(metric.type)))
      for (const suffix of ["_bucket", "_sum", "_count"]) names.add(`${metric.name}${suffix}`);
  }
  return names;
}

/** Every metric name of ours (`cjs_…`) or of prom-client's defaults (`process_…`, `nodejs_…`) in a text of PromQL. */
function namesIn(text: string): Set<string> {
  return new Set(text.match(/\b(?:cjs|process|nodejs)_[a-z0-9_]+/g) ?? []);
}

function dashboardExpressions(): Array<{ file: string; expr: string }> {
  return readdirSync(DASHBOARDS)
    .filter((file) => file.endsWith(".json"))
    .flatMap((file) => {
      const dashboard = JSON.parse(readFileSync(join(DASHBOARDS, file), "utf8")) as {
        panels: Array<{ targets?: Array<{ expr: string }> }>;
      };
      return dashboard.panels.flatMap((panel) => panel.targets ?? []).map((target) => ({ file, expr: target.expr }));
    });
}

describe("the metrics every service defines", () => {
  it("pass `promtool check metrics` (names, types, units, help), all of them exposed at once", async () => {
    collectProcessMetrics();
    const exposition = await metricsRegistry.metrics();
    expect(exposition).toContain("# TYPE cjs_");
    expect(await promtool(["check", "metrics"], { input: exposition })).toBe("");
  });

  it("keep prom-client's process and Node.js metrics under their standard names, with no prefix", async () => {
    const known = await exposedNames();
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_p99_seconds",
    ])
      expect(known).toContain(name);
    expect([...known].filter((name) => /^cjs_(process|nodejs)_/.test(name))).toEqual([]);
  });
});

describe("metric names in the dashboards and alert rules", () => {
  it("each name an alert rule uses is a metric the services define", async () => {
    const known = await exposedNames();
    const used = namesIn(readFileSync(join(DEPLOY, "prometheus/alerts.yml"), "utf8"));
    expect(used.size).toBeGreaterThan(0);
    expect([...used].filter((name) => !known.has(name))).toEqual([]);
  });

  it("each name a dashboard panel queries is a metric the services define", async () => {
    const known = await exposedNames();
    const expressions = dashboardExpressions();
    expect(expressions.length).toBeGreaterThan(0);
    const unknown = expressions.flatMap(({ file, expr }) =>
      [...namesIn(expr)].filter((name) => !known.has(name)).map((name) => `${file}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });
});
