/**
 * The job path's end-to-end proof on a cluster, shared by the cluster tests: an operator
 * business's fake nodes in an operator pool, a customer with credit submitting through
 * every gateway, and the check that every job ended once, on one node, charged once.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { expect } from "vitest";
import { ApiError } from "../../clients/sdk/src/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { ComputeClient } from "./client.js";
import { FakeNode } from "./fake-node.js";
import { listAllJobs, listAllLedgerEntries } from "./listing.js";
import { driveNodes, type NodeDriver } from "./node-driver.js";
import { createTenant, signedInClient } from "./system.js";

export const CLUSTER_JOB = { type: "shell", command: ["true"], resources: { cpu: 0.5, memory_mb: 256, gpu: 0 } };

export interface OperatorFleet {
  nodes: FakeNode[];
  /** The customer, signed in on each gateway. */
  users: ComputeClient[];
  slots: number;
}

/** `nodes` fake nodes of an operator business in `pool` (an operator pool), and a customer of the same application with enough credit. */
export async function setUpOperatorFleet(
  nc: NatsConnection,
  gatewayUrls: readonly string[],
  pool: string,
  nodeCount: number,
  slots: number,
): Promise<OperatorFleet> {
  const operator = await createTenant(nc, { operator: true });
  const { client: operatorClient } = await signedInClient(gatewayUrls[0]!, operator);
  const nodes = await Promise.all(
    Array.from({ length: nodeCount }, (_, index) =>
      FakeNode.register(operatorClient, gatewayUrls[index % gatewayUrls.length]!, operator.app.app_id, {
        name: `${pool}-${index}`,
        pool_id: pool,
        capacity: { cpu: slots, memory_mb: slots * 1024, gpu: 0, slots },
      }),
    ),
  );
  const customer = await createTenant(nc, { appId: operator.app.app_id });
  const { tokens } = await signedInClient(gatewayUrls[0]!, customer);
  const users = gatewayUrls.map(
    (baseUrl) => new ComputeClient({ baseUrl, appId: customer.app.app_id, accessToken: tokens.access_token }),
  );
  await requestRpc(nc, "adminCreditSet", { business_id: customer.business.business_id, amount: 1_000_000 });
  return { nodes, users, slots };
}

/**
 * Submits `count` jobs, `concurrency` at a time, taking turns between the gateways. A
 * submit refused with a retryable error (a leader election under way) is tried again;
 * only answered ones are pushed to `acknowledged`. Jobs a refused try may have created
 * anyway are found by the listing.
 */
export async function submitAcknowledged(
  fleet: OperatorFleet,
  pool: string,
  count: number,
  concurrency: number,
  acknowledged: string[],
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      for (;;) {
        try {
          const user = fleet.users[index % fleet.users.length]!;
          acknowledged.push(
            (await user.call("submitJob", { ...CLUSTER_JOB, pool_id: pool, name: `${pool}-${index}` })).job_id,
          );
          break;
        } catch (error) {
          if (!(error instanceof ApiError && error.code === "service.unavailable")) throw error;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * Every job of the customer succeeded in one attempt on one node, and was debited exactly
 * once. A submit refused while a leader was elected may have made a job anyway: the nodes
 * are driven on (a driver handed to `track`, for the test's cleanup) until those end too.
 */
export async function expectAllDoneOnceAndChargedOnce(
  fleet: OperatorFleet,
  pool: string,
  acknowledged: readonly string[],
  drive: NodeDriver,
  track: (driver: NodeDriver) => void,
): Promise<void> {
  const user = fleet.users[0]!;
  const unfinished = (await listAllJobs(user, pool))
    .filter((job) => !acknowledged.includes(job.job_id) && job.state !== "succeeded")
    .map((job) => job.job_id);
  if (unfinished.length > 0) {
    const more = driveNodes(fleet.nodes, {
      slots: fleet.slots,
      timeoutMs: 120_000,
      until: (stats) => unfinished.every((id) => stats.finished.has(id)),
    });
    track(more);
    await more.done;
    expect(more.stats.unexpected, more.stats.unexpected.join("\n")).toEqual([]);
  }
  expect(drive.stats.unexpected, drive.stats.unexpected.join("\n")).toEqual([]);
  expect(drive.stats.doubleDeliveries).toEqual([]);
  expect(drive.stats.overbooked).toEqual([]);
  const jobs = await listAllJobs(user, pool);
  const ids = jobs.map((job) => job.job_id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toEqual(expect.arrayContaining([...acknowledged]));
  const notOnce = jobs.filter((job) => job.state !== "succeeded" || job.attempt !== 1);
  // A job that took a second attempt or did not end says why in its timeline (node lost, repair, timeout).
  const timelines = await Promise.all(
    notOnce.map(async ({ job_id }) => ({
      job_id,
      timeline: (await user.call("retrieveJob", { job_id })).job.timeline,
    })),
  );
  expect(
    notOnce.map(({ job_id, state, attempt, node_id }) => ({ job_id, state, attempt, node_id })),
    JSON.stringify(timelines),
  ).toEqual([]);
  await expect
    .poll(async () => (await listAllLedgerEntries(user)).items.filter((entry) => entry.kind === "debit").length, {
      timeout: 60_000,
      interval: 250,
    })
    .toBe(ids.length);
  const { balance, items } = await listAllLedgerEntries(user);
  const debits = items.filter((entry) => entry.kind === "debit");
  expect(new Set(debits.map((entry) => entry.job_id)).size).toBe(ids.length);
  expect(new Set(items.map((entry) => entry.entry_id)).size).toBe(items.length);
  const sum = items.reduce((total, entry) => total + Math.round(entry.amount * 1e6), 0) / 1e6;
  expect(balance).toBe(sum);
}
