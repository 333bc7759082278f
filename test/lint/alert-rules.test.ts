import { execFile } from "node:child_process";
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";

const run = promisify(execFile);
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

/** promtool on PATH or where Debian's `prometheus` package puts it; null when absent. */
function findPromtool(): string | null {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/bin", "/usr/local/bin"].filter((dir) => dir !== "");
  for (const dir of dirs) {
    const candidate = join(dir, "promtool");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

async function promtool(...args: string[]): Promise<string> {
  return promtoolIn(RULES_DIR, ...args);
}

async function promtoolIn(cwd: string, ...args: string[]): Promise<string> {
  const bin = findPromtool();
  if (bin === null)
    throw new Error(
      "promtool is not installed: run `make test-tools` or `make test` (deploy/scripts/ensure-promtool.sh installs Debian's prometheus package, which ships it)",
    );
  try {
    const { stdout, stderr } = await run(bin, args, { cwd });
    return `${stdout}${stderr}`;
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(" ")} failed:\n${stdout}${stderr}`, { cause: error });
  }
}

describe("the Prometheus alert rules (deploy/prometheus/alerts.yml)", () => {
  it("pass `promtool check rules`", async () => {
    expect(await promtool("check", "rules", "alerts.yml")).toMatch(/SUCCESS: \d+ rules found/);
  });

  it("pass their unit tests (`promtool test rules alerts.test.yml`): each alert fires on its series and not on the others", async () => {
    expect(await promtool("test", "rules", "alerts.test.yml")).toContain("SUCCESS");
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
