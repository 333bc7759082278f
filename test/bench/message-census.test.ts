import { describe, expect, it } from "vitest";
import { Classifier, type ConnectionInfo, Owners, takeCensus, type TappedMessage } from "./message-census.js";

const SCHEDULER_NUID = "AAAAAAAAAAAAschedulr01";
const BILLING_NUID = "BBBBBBBBBBBBbilling001";

const connections: ConnectionInfo[] = [
  {
    cid: 1,
    name: "scheduler",
    inMsgs: 0,
    outMsgs: 0,
    subscriptions: [
      { subject: `_INBOX.${SCHEDULER_NUID}.*`, queue: undefined },
      { subject: "cjs.scheduler.jobs.submit", queue: "cjs-scheduler" },
      { subject: "cjs.events.job.*.transitioned", queue: undefined },
    ],
  },
  {
    cid: 2,
    name: "cjs-gateway",
    inMsgs: 0,
    outMsgs: 0,
    subscriptions: [{ subject: "_INBOX.GGGGGGGGGGGGgateway001.*", queue: undefined }],
  },
  {
    cid: 3,
    name: "billing",
    inMsgs: 0,
    outMsgs: 0,
    subscriptions: [{ subject: `_INBOX.${BILLING_NUID}.*`, queue: undefined }],
  },
  {
    cid: 4,
    name: "cjs-agent bench-pool-0",
    inMsgs: 0,
    outMsgs: 0,
    subscriptions: [{ subject: "_INBOX.CCCCCCCCCCCCagent00001.*", queue: undefined }],
  },
];

function message(subject: string, fields: Partial<TappedMessage> = {}): TappedMessage {
  return {
    atMs: 0,
    phase: 1,
    subject,
    reply: "",
    bytes: 10,
    status: 0,
    expectedLastSeq: undefined,
    kvOperation: undefined,
    ackBody: "",
    jobIds: [],
    error: "",
    ...fields,
  };
}

describe("the message census", () => {
  const owners = new Owners(connections, new Set(["bench-census"]));

  it("names the sender of a request by its reply inbox and the answering service by its subject", () => {
    const classifier = new Classifier(owners);
    expect(
      classifier.classify(message("cjs.scheduler.jobs.submit", { reply: "_INBOX.GGGGGGGGGGGGgateway001.abc" })),
    ).toEqual({
      kind: "request to a service",
      detail: "scheduler.jobs.submit",
      from: "gateway",
      to: "scheduler",
    });
    expect(classifier.classify(message("cjs.nodeplane.poll", { reply: "_INBOX.CCCCCCCCCCCCagent00001.x" })).from).toBe(
      "agents",
    );
  });

  it("tells KV reads, creates and compare-and-sets apart, and counts a refused one under its request", () => {
    const read = message("$JS.API.STREAM.MSG.GET.KV_cjs_jobs", { reply: `_INBOX.${SCHEDULER_NUID}.r1` });
    const readAnswer = message(`_INBOX.${SCHEDULER_NUID}.r1`, { bytes: 900 });
    const create = message("$KV.cjs_jobs.app.biz.job_x", {
      reply: `_INBOX.${SCHEDULER_NUID}.w1`,
      expectedLastSeq: "0",
    });
    const update = message("$KV.cjs_allocations.nod_x", {
      reply: `_INBOX.${SCHEDULER_NUID}.w2`,
      expectedLastSeq: "17",
    });
    const refused = message(`_INBOX.${SCHEDULER_NUID}.w2`, { error: "10071" });
    const rows = takeCensus([read, readAnswer, create, update, refused], owners, 2);
    const details = rows.map((row) => `${row.kind}: ${row.detail} (${row.from} → ${row.to})`);
    expect(details).toContain("KV read: cjs_jobs (scheduler → nats-server)");
    expect(details).toContain("KV write: cjs_jobs create (scheduler → nats-server)");
    expect(details).toContain(
      "KV write: cjs_allocations update (CAS), refused: wrong last sequence (scheduler → nats-server)",
    );
    expect(details).toContain("reply: to KV read (nats-server → scheduler)");
  });

  it("attributes deliveries and acks to the consumer's owner: a durable one by name, an ordered one by its process's NUID", () => {
    const classifier = new Classifier(owners);
    const durable = classifier.classify(
      message("$KV.cjs_jobs.a.b.job_x", { reply: "$JS.ACK.KV_cjs_jobs.billing-ledger-audit.1.5.5.1700000000.0" }),
    );
    expect(durable).toMatchObject({
      kind: "consumer delivery",
      detail: "billing-ledger-audit on KV_cjs_jobs",
      to: "billing",
    });
    const watch = classifier.classify(
      message("$KV.cjs_jobs.a.b.job_x", {
        reply: `$JS.ACK.KV_cjs_jobs.oc_${SCHEDULER_NUID.slice(0, 12)}XYZ_1.1.5.5.1700000000.0`,
      }),
    );
    expect(watch).toMatchObject({ kind: "watch delivery", detail: "watch of cjs_jobs", to: "scheduler" });
    const ack = classifier.classify(message("$JS.ACK.KV_cjs_jobs.scheduler.1.5.5.1700000000.0", { ackBody: "+WPI" }));
    expect(ack).toMatchObject({ kind: "ack", detail: "scheduler on KV_cjs_jobs: in progress", from: "scheduler" });
  });

  it("sends core events to the services listening on them", () => {
    const event = new Classifier(owners).classify(message("cjs.events.job.job_0123456789abcdefghij.transitioned"));
    expect(event).toMatchObject({ kind: "core event", detail: "job transitioned", from: "scheduler", to: "scheduler" });
  });

  it("counts each row per phase and leaves out the tap's own messages", () => {
    const tap: ConnectionInfo = {
      cid: 9,
      name: "bench-census",
      inMsgs: 0,
      outMsgs: 0,
      subscriptions: [{ subject: "_INBOX.TTTTTTTTTTTTtap0000001.*", queue: undefined }],
    };
    const withTap = new Owners([...connections, tap], new Set(["bench-census"]));
    const rows = takeCensus(
      [
        message("$JS.API.CONSUMER.INFO.KV_cjs_jobs.scheduler", { reply: "_INBOX.TTTTTTTTTTTTtap0000001.q", phase: 1 }),
        message("$KV.cjs_jobs.a", { reply: `_INBOX.${SCHEDULER_NUID}.1`, expectedLastSeq: "3", phase: 0 }),
        message("$KV.cjs_jobs.b", { reply: `_INBOX.${SCHEDULER_NUID}.2`, expectedLastSeq: "4", phase: 1 }),
      ],
      withTap,
      2,
    );
    expect(rows).toEqual([
      { kind: "KV write", detail: "cjs_jobs update (CAS)", from: "scheduler", to: "nats-server", counts: [1, 1] },
    ]);
  });
});
