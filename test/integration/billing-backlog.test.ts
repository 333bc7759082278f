import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BUCKETS,
  CONSUMERS,
  encodeJson,
  ensureBuckets,
  ensureMeteringStream,
  STREAMS,
  subjects,
} from "../../shared/nats/index.js";
import { newId, newJobId, systemClock } from "../../shared/runtime/index.js";
import { openCreditLedger } from "../../services/billing/ledger/index.js";
import { chargeMicros } from "../../services/billing/metering/charge.js";
import { jobKey, tagJobId } from "../../shared/records/index.js";
import { queuedJobRecord } from "../harness/job-records.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";
import { startBilling, type RunningService } from "../harness/system.js";

/**
 * A backlog of one business's ended attempts, as 500 jobs a second of it would leave:
 * two billing replicas charge every one exactly once, and they write the business's
 * credit record in batches, not once per charge (the writes that collided and left
 * "credit account is too busy" behind). The jobs are records written straight into
 * `cjs_jobs`, with their metering messages, before billing starts.
 */
const JOBS = 1_500;
const APP = "backlog";

describe.each(NATS_TOPOLOGIES)("a metering backlog of one business, on $name", (topology) => {
  let nats: RunningNats;
  let nc: NatsConnection;
  const billing: RunningService[] = [];

  beforeAll(async () => {
    nats = await topology.start();
    nc = await connect({ servers: nats.url.split(",") });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(billing.map((service) => service.stop()));
    await nc?.close();
    await nats?.stop();
  });

  it("is charged exactly once per attempt by two replicas, in far fewer writes of the account than charges", async () => {
    const businessId = newId("biz");
    const replicas = { replicas: nats.replicas };
    const kv = await ensureBuckets(nc, [BUCKETS.jobs, BUCKETS.creditAccounts], replicas);
    await ensureMeteringStream(nc, replicas);
    const js = jetstream(nc);
    const end = Date.now() - 60_000;
    const at = (offsetMs: number) => new Date(end + offsetMs).toISOString();
    const jobIds: string[] = [];
    for (let index = 0; index < JOBS; index += 1) {
      const jobId = tagJobId(newJobId(Date.now()), "operator");
      jobIds.push(jobId);
      const record = queuedJobRecord({
        job_id: jobId,
        app_id: APP,
        business_id: businessId,
        state: "succeeded",
        attempt: 1,
        exit_code: 0,
        timeline: [
          { at: at(-3_000), state: "queued", attempt: 0, reason: "submitted", node_id: null },
          { at: at(-2_000), state: "assigned", attempt: 1, reason: "placed", node_id: "nod_00000000000000000000" },
          { at: at(-1_000), state: "running", attempt: 1, reason: "started", node_id: "nod_00000000000000000000" },
          { at: at(0), state: "succeeded", attempt: 1, reason: "result", node_id: "nod_00000000000000000000" },
        ],
      });
      const key = jobKey(APP, businessId, jobId);
      await kv[BUCKETS.jobs].put(key, encodeJson(record));
      await js.publish(
        subjects.metering(jobId),
        encodeJson({ job_key: key, job_id: jobId, attempt: 1, reason: "result" }),
      );
    }

    // Every write of the business's credit record, as a watch sees it.
    const accounts = await new Kvm(nc).open(BUCKETS.creditAccounts);
    let writes = 0;
    const watch = await accounts.watch({ key: `${APP}.${businessId}` });
    void (async () => {
      for await (const _entry of watch) writes += 1;
    })();

    const env = { CJS_NATS_REPLICAS: String(nats.replicas) };
    billing.push(await startBilling(nats.url, env), await startBilling(nats.url, env));
    const jsm = await jetstreamManager(nc);
    await expect
      .poll(
        async () => {
          const info = await jsm.consumers.info(STREAMS.metering, CONSUMERS.billingMetering);
          return info.num_pending + info.num_ack_pending;
        },
        { timeout: 120_000, interval: 250 },
      )
      .toBe(0);
    watch.stop();

    const ledger = await openCreditLedger(nc, { ...replicas, clock: systemClock, logger: pino({ level: "silent" }) });
    const account = { app_id: APP, business_id: businessId };
    const period = { start: "2000-01-01T00:00:00.000Z", end: "2100-01-01T00:00:00.000Z", included_credit: 0 };
    const debits: Array<{ job_id: string | null; amount: number }> = [];
    let cursor: string | undefined;
    do {
      const page = await ledger.list(account, period, { limit: 200, cursor });
      debits.push(...page.items.filter((entry) => entry.kind === "debit"));
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    expect(debits).toHaveLength(JOBS);
    expect(new Set(debits.map((entry) => entry.job_id))).toEqual(new Set(jobIds));
    // Each job ran 1 s of 1 core and 512 MB, at the default plan's rates.
    const each = chargeMicros(
      1_000,
      { cpu: 1, memory_mb: 512, gpu: 0 },
      { cpu_core_hour: 1, memory_gb_hour: 0.1, gpu_hour: 20 },
    );
    expect(Math.round(debits.reduce((sum, entry) => sum - entry.amount, 0) * 1e6)).toBe(JOBS * each);
    expect(writes).toBeLessThan(JOBS / 4);
  }, 240_000);
});
