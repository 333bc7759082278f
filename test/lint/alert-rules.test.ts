import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { promtool } from "../harness/promtool.js";

const RULES_DIR = join(import.meta.dirname, "../../deploy/prometheus");
const OPERATIONS_DOC = join(import.meta.dirname, "../../docs/operations.md");

interface RuleFile {
  groups: Array<{ rules: Array<{ alert?: string; annotations?: Record<string, string> }> }>;
}
interface RuleTests {
  tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
}

const rules = parse(readFileSync(join(RULES_DIR, "alerts.yml"), "utf8")) as RuleFile;
const alerts = rules.groups.flatMap((group) => group.rules).filter((rule) => rule.alert !== undefined);

function promtoolIn(cwd: string, ...args: string[]): Promise<string> {
  return promtool(args, { cwd });
}

describe("the Prometheus alert rules (deploy/prometheus/alerts.yml)", () => {
  it("pass `promtool check rules`", async () => {
    expect(await promtoolIn(RULES_DIR, "check", "rules", "alerts.yml")).toMatch(/SUCCESS: \d+ rules found/);
  });

  it("pass their unit tests (`promtool test rules alerts.test.yml`): each alert fires on its series and not on the others", async () => {
    expect(await promtoolIn(RULES_DIR, "test", "rules", "alerts.test.yml")).toContain("SUCCESS");
  });
});

describe("the Grafana dashboard (deploy/grafana/dashboards/cjs.json)", () => {
  it("has only queries that parse: promtool checks them as recording rules", async () => {
    const dashboard = JSON.parse(readFileSync(join(RULES_DIR, "../grafana/dashboards/cjs.json"), "utf8")) as {
      panels: Array<{ targets?: Array<{ expr: string }> }>;
    };
    const exprs = dashboard.panels.flatMap((panel) => panel.targets ?? []).map((target) => target.expr);
    expect(exprs.length).toBeGreaterThan(0);
    const dir = mkdtempSync(join(tmpdir(), "cjs-dashboard-"));
    try {
      writeFileSync(
        join(dir, "queries.yml"),
        stringify({
          groups: [
            { name: "dashboard", rules: exprs.map((expr, index) => ({ record: `dashboard:query_${index}`, expr })) },
          ],
        }),
      );
      expect(await promtoolIn(dir, "check", "rules", "queries.yml")).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("every alert", () => {
  it("has a unit test in which it fires", () => {
    const tests = parse(readFileSync(join(RULES_DIR, "alerts.test.yml"), "utf8")) as RuleTests;
    const fired = new Set(
      tests.tests
        .flatMap((test) => test.alert_rule_test ?? [])
        .filter((check) => check.exp_alerts.length > 0)
        .map((check) => check.alertname),
    );
    expect(alerts.map((rule) => rule.alert).filter((name) => !fired.has(name as string))).toEqual([]);
  });

  it("links its runbook, a section of docs/operations.md named after it", () => {
    const doc = readFileSync(OPERATIONS_DOC, "utf8");
    for (const rule of alerts)
      expect(rule.annotations?.runbook_url).toBe(`docs/operations.md#${(rule.alert as string).toLowerCase()}`);
    const withoutRunbook = alerts
      .map((rule) => rule.alert as string)
      .filter((name) => !doc.includes(`\n### ${name}\n`));
    expect(withoutRunbook, "alerts without a `### <alert>` runbook in docs/operations.md").toEqual([]);
  });
});
