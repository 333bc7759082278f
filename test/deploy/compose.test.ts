import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DEPLOY, runManifestCheck } from "./manifest-check.js";

const COMPOSE = join(DEPLOY, "compose.yaml");
const PASSWORDS = {
  NATS_SERVICES_PASSWORD: "s",
  NATS_OPERATOR_PASSWORD: "o",
  NATS_AGENT_PASSWORD: "a",
  GRAFANA_ADMIN_PASSWORD: "g",
};
// Every profile, so the agent is checked too.
const ENV = { ...PASSWORDS, COMPOSE_PROFILES: "agent" };
const SERVICES = ["gateway", "scheduler", "node-registry", "log-relay", "billing", "webhooks"] as const;
const NATS_URL = "nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Project = { services: Record<string, any> };

let project: Project;
const scratch = mkdtempSync(join(tmpdir(), "cjs-compose-"));

beforeAll(() => {
  const result = runManifestCheck("compose", COMPOSE, ENV);
  if (!result.ok) throw new Error(`manifest-check compose failed:\n${result.stderr}`);
  project = JSON.parse(result.stdout) as Project;
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The compose file with one text replaced, written beside the original's name in a scratch dir. */
function variant(from: string, to: string): string {
  const text = readFileSync(COMPOSE, "utf8");
  expect(text).toContain(from);
  const path = join(scratch, "compose.yaml");
  writeFileSync(path, text.replace(from, to));
  return path;
}

describe("deploy/compose.yaml", () => {
  it("loads as docker compose loads it: the compose-spec schema and interpolation", () => {
    expect(Object.keys(project.services).sort()).toEqual(
      [...SERVICES, "agent", "grafana", "nats-1", "nats-2", "nats-3", "prometheus"].sort(),
    );
  });

  it("refuses a key the compose spec does not have, so the check is not a formality", () => {
    const result = runManifestCheck("compose", variant("    replicas: 2", "    replica: 2"), ENV);
    expect(result.ok).toBe(false);
    expect(result.stderr).toContain("additional properties 'replica' not allowed");
  });

  it("refuses to start without the NATS passwords, naming the missing variable", () => {
    const { NATS_AGENT_PASSWORD: _omitted, ...rest } = ENV;
    const result = runManifestCheck("compose", COMPOSE, rest);
    expect(result.ok).toBe(false);
    expect(result.stderr).toContain("required variable NATS_AGENT_PASSWORD is missing");
  });

  it("runs two replicas of every service from the one image, on the three NATS servers with R3 buckets", () => {
    for (const name of SERVICES) {
      const service = project.services[name];
      expect(service.deploy.replicas, name).toBe(2);
      expect(service.image, name).toBe("compute-job-service:local");
      expect(service.environment, name).toMatchObject({
        SERVICE: name,
        NATS_URL,
        NATS_USER: "services",
        NATS_PASSWORD: "s",
        CJS_NATS_REPLICAS: "3",
      });
    }
  });

  it("runs three NATS servers from the one config file, each with its own name and store", () => {
    const names = ["nats-1", "nats-2", "nats-3"].map((name) => {
      const server = project.services[name];
      expect(server.command).toEqual(["-c", "/etc/nats/nats.conf"]);
      expect(server.volumes).toContainEqual(
        expect.objectContaining({
          type: "bind",
          source: "./kubernetes/base/nats/nats.conf",
          target: "/etc/nats/nats.conf",
        }),
      );
      expect(server.volumes).toContainEqual(expect.objectContaining({ type: "volume", source: name, target: "/data" }));
      expect(server.environment).toMatchObject({
        NATS_ROUTE_1: "nats://nats-1:6222",
        NATS_ROUTE_2: "nats://nats-2:6222",
        NATS_ROUTE_3: "nats://nats-3:6222",
      });
      return server.environment.NATS_SERVER_NAME as string;
    });
    expect(new Set(names).size).toBe(3);
  });

  it("runs the agent in NATS-direct mode as the node-plane user, replies on its own inbox prefix", () => {
    expect(project.services.agent.environment).toMatchObject({
      SERVICE: "agent",
      CJS_AGENT_NATS_URL: NATS_URL,
      CJS_AGENT_NATS_INBOX_PREFIX: "_INBOX_agents",
      NATS_USER: "agent",
      NATS_PASSWORD: "a",
    });
  });

  it("has Prometheus scrape every service on the ops port it runs with, and load the alert rules", () => {
    const config = parse(readFileSync(join(DEPLOY, "prometheus", "prometheus.yml"), "utf8")) as {
      rule_files: string[];
      scrape_configs: { job_name: string; dns_sd_configs: { names: string[]; port: number }[] }[];
    };
    const scraped = Object.fromEntries(
      config.scrape_configs.map((job) => [job.dns_sd_configs[0]?.names[0], String(job.dns_sd_configs[0]?.port)]),
    );
    expect(scraped).toEqual(
      Object.fromEntries(SERVICES.map((name) => [name, project.services[name].environment.CJS_OPS_PORT])),
    );
    expect(config.rule_files).toEqual(["alerts.yml"]);
    expect(project.services.prometheus.volumes).toContainEqual(
      expect.objectContaining({ source: "./prometheus", target: "/etc/prometheus" }),
    );
    expect(parse(readFileSync(join(DEPLOY, "prometheus", "alerts.yml"), "utf8"))).toHaveProperty("groups");
  });

  it("provisions Grafana with the Prometheus data source and the dashboards of deploy/grafana/dashboards", () => {
    const grafana = project.services.grafana;
    const datasources = parse(
      readFileSync(join(DEPLOY, "grafana", "provisioning", "datasources", "prometheus.yaml"), "utf8"),
    ) as { datasources: { type: string; url: string }[] };
    expect(datasources.datasources).toEqual([
      expect.objectContaining({ type: "prometheus", url: "http://prometheus:9090" }),
    ]);
    const providers = parse(
      readFileSync(join(DEPLOY, "grafana", "provisioning", "dashboards", "cjs.yaml"), "utf8"),
    ) as { providers: { options: { path: string } }[] };
    const dashboards = grafana.volumes.find((volume: { source: string }) => volume.source === "./grafana/dashboards");
    expect(providers.providers.map((provider) => provider.options.path)).toEqual([dashboards.target]);
    expect(grafana.volumes).toContainEqual(
      expect.objectContaining({ source: "./grafana/provisioning", target: "/etc/grafana/provisioning" }),
    );
  });
});
