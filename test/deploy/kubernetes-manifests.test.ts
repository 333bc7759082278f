import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildKustomization, DEPLOY, runManifestCheck, type KubeObject } from "./manifest-check.js";

const KUBERNETES = join(DEPLOY, "kubernetes");
const SERVICES = ["gateway", "scheduler", "node-registry", "log-relay", "billing", "webhooks"] as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Container = any;

let production: KubeObject[];
const scratch = mkdtempSync(join(tmpdir(), "cjs-kustomize-"));

beforeAll(() => {
  production = buildKustomization(join(KUBERNETES, "production"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function objects(kind: string): KubeObject[] {
  return production.filter((object) => object.kind === kind);
}
function named(kind: string, name: string): KubeObject {
  const found = objects(kind).find((object) => object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the production build`);
  return found;
}
function container(workload: KubeObject): Container {
  return workload.spec.template.spec.containers[0];
}
function matches(selector: Record<string, string>, labels: Record<string, string> = {}): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}
function envValue(c: Container, name: string): string | undefined {
  return (c.env as { name: string; value?: string }[]).find((entry) => entry.name === name)?.value;
}

describe("the Kubernetes manifests", () => {
  it("build, base and production overlay, with every object decoding strictly into its Kubernetes API type", () => {
    expect(buildKustomization(join(KUBERNETES, "base")).length).toBeGreaterThan(0);
    expect(production.map((object) => object.metadata.namespace ?? "(cluster)")).toEqual(
      production.map((object) => (object.kind === "Namespace" ? "(cluster)" : "cjs")),
    );
  });

  it("fail the check when a field is not one of the API's, so the check is not a formality", () => {
    const copy = join(scratch, "base");
    cpSync(join(KUBERNETES, "base"), copy, { recursive: true });
    const patch = join(copy, "services", "pod-defaults.yaml");
    writeFileSync(patch, readFileSync(patch, "utf8").replace("periodSeconds: 5", "periodSecond: 5"));
    const result = runManifestCheck("kustomize", copy);
    expect(result.ok).toBe(false);
    expect(result.stderr).toContain('unknown field "periodSecond"');
  });

  it("run every service with liveness on /healthz and readiness on /readyz of its ops port, the port Prometheus is told", () => {
    for (const service of SERVICES) {
      const deployment = named("Deployment", service);
      const c = container(deployment);
      expect(envValue(c, "SERVICE")).toBe(service);
      const ops = (c.ports as { name: string; containerPort: number }[]).find((port) => port.name === "ops");
      expect(String(ops?.containerPort)).toBe(envValue(c, "CJS_OPS_PORT"));
      expect(c.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "ops" });
      expect(c.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "ops" });
      expect(deployment.spec.template.metadata.annotations["prometheus.io/port"]).toBe(String(ops?.containerPort));
    }
  });

  it("give every container resource requests and run it as a non-root user", () => {
    for (const workload of [...objects("Deployment"), ...objects("StatefulSet")]) {
      const c = container(workload);
      expect(c.resources.requests, workload.metadata.name).toMatchObject({
        cpu: expect.any(String),
        memory: expect.any(String),
      });
      expect(workload.spec.template.spec.securityContext.runAsNonRoot, workload.metadata.name).toBe(true);
      expect(c.securityContext.allowPrivilegeEscalation, workload.metadata.name).toBe(false);
    }
  });

  it("cover every workload with a disruption budget and every service with an autoscaler of at least two replicas", () => {
    for (const workload of [...objects("Deployment"), ...objects("StatefulSet")]) {
      const podLabels = workload.spec.template.metadata.labels as Record<string, string>;
      const budgets = objects("PodDisruptionBudget").filter((pdb) => matches(pdb.spec.selector.matchLabels, podLabels));
      expect(budgets, workload.metadata.name).toHaveLength(1);
    }
    for (const service of SERVICES) {
      const autoscaler = named("HorizontalPodAutoscaler", service);
      expect(autoscaler.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: service });
      expect(autoscaler.spec.minReplicas).toBeGreaterThanOrEqual(2);
    }
  });

  it("run a three-server NATS cluster whose routes name its own pods, with sync_interval always", () => {
    const nats = named("StatefulSet", "nats");
    expect(nats.spec.replicas).toBe(3);
    const c = container(nats);
    const routes = ["NATS_ROUTE_1", "NATS_ROUTE_2", "NATS_ROUTE_3"].map((name) => envValue(c, name));
    expect(routes).toEqual([0, 1, 2].map((i) => `nats://nats-${i}.${nats.spec.serviceName}:6222`));
    expect(c.args).toEqual(["-c", "/etc/nats/nats.conf"]);
    const volume = (nats.spec.template.spec.volumes as { name: string; configMap: { name: string } }[]).find(
      (v) => v.name === "config",
    );
    const config = named("ConfigMap", volume?.configMap.name ?? "");
    expect(config.data?.["nats.conf"]).toMatch(/^\s*sync_interval: always$/m);
  });

  it("point every service at all three NATS servers with R3 buckets, the password from the secret", () => {
    const settings = objects("ConfigMap").find((map) => map.metadata.name.startsWith("cjs-services-"));
    expect(settings?.data).toMatchObject({
      NATS_URL: "nats://nats-0.nats-cluster:4222,nats://nats-1.nats-cluster:4222,nats://nats-2.nats-cluster:4222",
      NATS_USER: "services",
      CJS_NATS_REPLICAS: "3",
    });
    for (const service of SERVICES) {
      const c = container(named("Deployment", service));
      expect(c.envFrom).toEqual([{ configMapRef: { name: settings?.metadata.name } }]);
      expect(c.env).toContainEqual({
        name: "NATS_PASSWORD",
        valueFrom: { secretKeyRef: { name: "cjs-nats", key: "services-password" } },
      });
    }
  });

  it("write no password: every *PASSWORD variable comes from a secret", () => {
    for (const workload of [...objects("Deployment"), ...objects("StatefulSet")]) {
      for (const entry of container(workload).env as {
        name: string;
        value?: string;
        valueFrom?: { secretKeyRef?: unknown };
      }[]) {
        if (entry.name.endsWith("PASSWORD"))
          expect(entry.valueFrom?.secretKeyRef, `${workload.metadata.name} ${entry.name}`).toBeDefined();
      }
    }
    expect(objects("Secret")).toEqual([]);
  });

  it("admit to the NATS client port only the pods labelled as its clients, which are the six services, and routes only between NATS pods", () => {
    const policy = named("NetworkPolicy", "nats");
    expect(policy.spec.ingress).toEqual([
      { from: [{ podSelector: { matchLabels: { "cjs/nats-client": "true" } } }], ports: [{ port: "client" }] },
      { from: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "nats" } } }], ports: [{ port: "cluster" }] },
    ]);
    const clients = [...objects("Deployment"), ...objects("StatefulSet")]
      .filter((workload) => workload.spec.template.metadata.labels["cjs/nats-client"] === "true")
      .map((workload) => workload.metadata.name);
    expect(clients.sort()).toEqual([...SERVICES].sort());
    const denyAll = named("NetworkPolicy", "default-deny-ingress");
    expect(denyAll.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress"] });
  });
});
