/**
 * A node's result goes to the owner of its job's partition, on one server and on a 3-node
 * cluster: the gateway asks on the partition's subject and falls back to the shared one
 * only when nobody serves it; scheduler replicas serve the subjects of the partitions they
 * own, and when one is killed the survivor serves them all once it has taken them over,
 * while every result meanwhile is still recorded.
 */
import { connect, type Msg, type NatsConnection } from "@nats-io/transport-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Scheduler } from "../../services/scheduler/scheduler.js";
import { askJobOwner } from "../../services/gateway/rpc/ask-job-owner.js";
import { AppError } from "../../shared/errors/index.js";
import { newJobId } from "../../shared/runtime/index.js";
import { type InternalCommand, requestRpc, serveRpc } from "../../shared/nats/index.js";
import { JOB_PARTITIONS, jobPartition, partitionAddress, tagJobId } from "../../shared/records/index.js";
import type { ComputeClient } from "../harness/client.js";
import { FakeNode } from "../harness/fake-node.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

const logger = pino({ level: "silent" });
const RESULT_SUBJECTS = "cjs.scheduler.partition.*.nodes.result";

function resultCommand(jobId: string): InternalCommand<"nodeResult"> {
  return {
    caller: { app_id: "app_0000000000000000000000", business_id: "biz_0000000000000000000000", node_id: "node_x" },
    body: { job_id: jobId, attempt: 1, outcome: "succeeded", exit_code: 0 },
  } as InternalCommand<"nodeResult">;
}

/** Subjects of the result requests the broker carried, in order (a plain subscription sees every request). */
function tapResults(nc: NatsConnection): { subjects: string[]; stop(): void } {
  const subjects: string[] = [];
  const record = (_error: unknown, msg: Msg): void => {
    subjects.push(msg.subject);
  };
  const taps = [RESULT_SUBJECTS, "cjs.scheduler.nodes.result"].map((subject) =>
    nc.subscribe(subject, { callback: record }),
  );
  return { subjects, stop: () => taps.forEach((tap) => tap.unsubscribe()) };
}

describe.each(NATS_TOPOLOGIES)("node results routed to the partition's owner on $name", (topology) => {
  let nats: RunningNats;
  let nc: NatsConnection;

  beforeAll(async () => {
    nats = await topology.start();
    nc = await connect({ servers: nats.url.split(",") });
  }, 120_000);

  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  describe("the gateway's rule", () => {
    const jobId = tagJobId(newJobId(Date.now()), "self_hosted", 7);

    /** Stand-ins for the scheduler: each answers with its own state, so the test sees which one answered. */
    function standIn(address: string | undefined, answer: () => Promise<unknown>) {
      const options = { queue: "scheduler", logger, handle: answer };
      return address === undefined
        ? serveRpc(nc, "nodeResult", options)
        : serveRpc(nc, "nodeResultOfPartition", { ...options, address });
    }
    const reply = (state: "succeeded" | "failed") => async () => ({
      job_id: jobId,
      attempt: 1,
      state,
      duplicate: false,
    });

    it("asks the job's partition's subject when its owner serves it", async () => {
      const shared = standIn(undefined, reply("failed"));
      const owner = standIn(partitionAddress(jobPartition(jobId)), reply("succeeded"));
      await nc.flush();
      try {
        expect(await askJobOwner(nc, "nodeResult", resultCommand(jobId), undefined)).toMatchObject({
          state: "succeeded",
        });
      } finally {
        shared.unsubscribe();
        owner.unsubscribe();
      }
    });

    it("asks the shared subject when nobody serves the partition's (a handover, an older replica)", async () => {
      const shared = standIn(undefined, reply("failed"));
      const otherPartition = standIn(partitionAddress((jobPartition(jobId) + 1) % JOB_PARTITIONS), reply("succeeded"));
      await nc.flush();
      try {
        expect(await askJobOwner(nc, "nodeResult", resultCommand(jobId), undefined)).toMatchObject({ state: "failed" });
      } finally {
        shared.unsubscribe();
        otherPartition.unsubscribe();
      }
    });

    it("passes the owner's refusal on, without asking again elsewhere", async () => {
      let sharedAsked = 0;
      const shared = standIn(undefined, async () => {
        sharedAsked += 1;
        return reply("failed")();
      });
      const owner = standIn(partitionAddress(jobPartition(jobId)), async () => {
        throw new AppError("job.stale_attempt");
      });
      await nc.flush();
      try {
        await expect(askJobOwner(nc, "nodeResult", resultCommand(jobId), undefined)).rejects.toMatchObject({
          code: "job.stale_attempt",
        });
        expect(sharedAsked).toBe(0);
      } finally {
        shared.unsubscribe();
        owner.unsubscribe();
      }
    });
  });

  describe("scheduler replicas", () => {
    let system: RunningSystem;
    let tenant: Tenant;
    let user: ComputeClient;

    beforeAll(async () => {
      system = await startSystem(
        nats.url,
        { gateways: 1, schedulers: 2, registries: 1 },
        {
          CJS_NATS_REPLICAS: String(nats.replicas),
        },
      );
      tenant = await createTenant(system.gateways[0]!.nc);
      ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
    }, 120_000);

    afterAll(async () => {
      await system?.stop();
    });

    /** The partitions whose subject nobody answers now (a malformed command gets a refusal from whoever serves it). */
    async function unservedPartitions(): Promise<number[]> {
      const unserved: number[] = [];
      for (let partition = 0; partition < JOB_PARTITIONS; partition += 1) {
        const asked = requestRpc(nc, "nodeResultOfPartition", {} as InternalCommand<"nodeResult">, {
          address: partitionAddress(partition),
          timeoutMs: 2_000,
        });
        const code = await asked.then(
          () => "answered",
          (error: unknown) => (error instanceof AppError ? error.code : "thrown"),
        );
        if (code === "service.unavailable") unserved.push(partition);
      }
      return unserved;
    }

    /** Runs `count` jobs to their end on `node`; answers their ids once every result is recorded. */
    async function runJobs(node: FakeNode, pool: string, count: number): Promise<string[]> {
      const ids: string[] = [];
      for (let index = 0; index < count; index += 1) {
        const { job_id } = await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool });
        await node.take(job_id);
        expect(await node.finish(job_id)).toMatchObject({ job_id, state: "succeeded", duplicate: false });
        ids.push(job_id);
      }
      return ids;
    }

    it("serve every partition's subject, and each result goes to its job's partition's subject", async () => {
      await expect.poll(unservedPartitions, { timeout: 30_000, interval: 100 }).toEqual([]);
      const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, {
        pool_id: "routed",
      });
      const tap = tapResults(nc);
      await nc.flush();
      try {
        const ids = await runJobs(node, "routed", 6);
        expect(tap.subjects).toEqual(
          ids.map((id) => `cjs.scheduler.partition.${partitionAddress(jobPartition(id))}.nodes.result`),
        );
      } finally {
        tap.stop();
      }
    });

    it("after one replica is killed, record every result, and the survivor serves every partition's subject", async () => {
      const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, {
        pool_id: "routed-kill",
      });
      const [killed, survivor] = system.schedulers as [RunningSystem["schedulers"][0], RunningSystem["schedulers"][0]];
      await killed.crash();
      // Results while the killed replica's partitions are unowned (answered through the shared subject) and after.
      const during = await runJobs(node, "routed-kill", 6);
      await expect
        .poll(() => (survivor.service as Scheduler).ownedPartitions().size, { timeout: 30_000, interval: 100 })
        .toBe(JOB_PARTITIONS);
      await expect.poll(unservedPartitions, { timeout: 30_000, interval: 100 }).toEqual([]);
      const after = await runJobs(node, "routed-kill", 6);
      for (const job_id of [...during, ...after])
        expect((await user.call("retrieveJob", { job_id })).job).toMatchObject({ state: "succeeded", attempt: 1 });
    });
  });
});
