/**
 * Start order does not matter: every service, two replicas each, started as real processes
 * at the same moment against a cluster that has never held a bucket, all race to
 * provision the same R3 buckets and streams while leaders are still being elected, and
 * all come up ready without a crash.
 */
import { describe, expect, it } from "vitest";
import { startNatsCluster } from "../harness/nats-cluster.js";
import { healthUrlOf, serviceProcessEnv, untilReadyz } from "../harness/readiness.js";
import { startServiceProcess } from "../harness/service-process.js";

const SERVICES = ["gateway", "scheduler", "node-registry", "log-relay", "billing", "webhooks"] as const;
const REPLICAS_EACH = 2;
/** Twelve Node.js processes starting on a small machine, then provisioning: a bound, not an expected time. */
const READY_WAIT_MS = 120_000;

describe("services started together on a fresh three-node cluster", () => {
  it("two replicas of each of the six services, started at once, all turn ready and none exits", async () => {
    await using cluster = await startNatsCluster();
    const children = SERVICES.flatMap((service) => Array.from({ length: REPLICAS_EACH }, () => service)).map(
      (service) => startServiceProcess({ service, env: serviceProcessEnv(service, cluster.url, cluster.replicas) }),
    );
    try {
      const urls = await Promise.all(children.map((child) => healthUrlOf(child, READY_WAIT_MS)));
      await Promise.all(children.map((child, index) => untilReadyz(child, urls[index]!, 200, READY_WAIT_MS)));
      for (const child of children)
        expect(child.alive(), `${child.name} (pid ${child.pid}) exited; its output:\n${child.output()}`).toBe(true);
    } finally {
      await Promise.all(children.map((child) => child.stop()));
    }
  }, 240_000);
});
