import { describe, expect, it } from "vitest";
import { MalformedIdError } from "../contract/index.js";
import { BUCKETS, checkKvKey, kvKey, subjects } from "./names.js";

const JOB = "job_0VbeygdjkkWnwRC9cwe1";
const NODE = "nod_ecxUgow1WBd5BpAdgW2q";
const BIZ = "biz_ecxUgow1WBd5BpAdgW2q";
const USER = "usr_ecxUgow1WBd5BpAdgW2q";
const KEY = "key_ecxUgow1WBd5BpAdgW2q";
function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

/** Wildcards, separators and characters no id may hold. */
const HOSTILE = [
  "*",
  ">",
  ".",
  " ",
  "\0",
  "/",
  "..",
  "job_*",
  "job_>",
  "../x",
  "job_0VbeygdjkkWnwRC9cwe1.x",
  "job_0VbeygdjkkWnwRC9cwe1 ",
];

describe("kvKey", () => {
  it("keeps key-safe parts as they are and joins them with dots", () => {
    expect(kvKey("local", "usr_abc")).toBe("local.usr_abc");
  });

  it("encodes parts that contain dots or other characters, so an e-mail cannot add key levels", () => {
    const key = kvKey("local", "a.b@example.com");
    expect(key.split(".")).toHaveLength(2);
    expect(key).toMatch(/^local\.=[-_A-Za-z0-9]+$/);
  });

  it("never lets a literal part look like an encoded one", () => {
    expect(kvKey("=YQ")).not.toBe(kvKey("a"));
  });

  it("gives different keys for different inputs that differ only in unsafe characters", () => {
    expect(kvKey("a@b.c")).not.toBe(kvKey("a@b_c"));
  });
});

describe("subjects", () => {
  it("names commands under the cjs root", () => {
    expect(subjects.adminAppCreate()).toBe("cjs.admin.app.create");
    expect(subjects.servicePing("billing")).toBe("cjs.ping.billing");
    expect(subjects.billingWebhookReceive()).toBe("cjs.billing.webhooks.receive");
    expect(subjects.billingSandboxSessionAct()).toBe("cjs.billing.sandbox.session.act");
  });

  it("keeps a job's drop counts out of the filter of its log lines", () => {
    expect(subjects.jobLogs(JOB, 2)).toBe(`cjs.logs.${JOB}.2`);
    expect(subjects.jobLogsOfJob(JOB)).toBe(`cjs.logs.${JOB}.*`);
    expect(subjects.jobLogDrops(JOB)).toBe(`cjs.logdrops.${JOB}`);
    expect(subjects.logUsageOfNode(NODE, "2026112703")).toBe(`cjs.logusage.node.${NODE}.2026112703`);
    expect(subjects.logUsageOfBusiness("acme", BIZ, "20261127")).toBe(`cjs.logusage.business.acme.${BIZ}.20261127`);
    expect(() => subjects.logUsageOfNode(NODE, "2026-11-27")).toThrow();
    expect(() => subjects.logUsageOfBusiness("acme", BIZ, "*")).toThrow();
    expect(subjects.jobLogDrops(JOB).startsWith("cjs.logs.")).toBe(false);
  });

  it("names a business's artifact usage counter by its tenancy", () => {
    expect(subjects.artifactUsageOfBusiness("acme", BIZ)).toBe(`cjs.artifactusage.acme.${BIZ}`);
    expect(() => subjects.artifactUsageOfBusiness("acme", "*")).toThrow();
    expect(subjects.artifactUsageAll()).toBe("cjs.artifactusage.>");
  });

  it("refuses to put anything but a well-formed id into a subject", () => {
    for (const bad of HOSTILE) {
      expect(() => subjects.jobLogs(bad, 1)).toThrow(MalformedIdError);
      expect(() => subjects.jobLogsOfJob(bad)).toThrow(MalformedIdError);
      expect(() => subjects.jobLogDrops(bad)).toThrow(MalformedIdError);
      expect(() => subjects.jobTransitioned(bad)).toThrow(MalformedIdError);
      expect(() => subjects.metering(bad)).toThrow(MalformedIdError);
      expect(() => subjects.nodeAssigned(bad)).toThrow(MalformedIdError);
      expect(() => subjects.nodeReleased(bad)).toThrow(MalformedIdError);
      expect(() => subjects.nodeDraining(bad)).toThrow(MalformedIdError);
      expect(() => subjects.nodeEvents(bad)).toThrow(MalformedIdError);
    }
    expect(() => subjects.jobLogs(JOB, 0)).toThrow();
    expect(() => subjects.jobLogs(JOB, 1.5)).toThrow();
    expect(subjects.nodeAssigned(NODE)).toBe(`cjs.events.node.${NODE}.assigned`);
    expect(subjects.nodeReleased(NODE)).toBe(`cjs.events.node.${NODE}.released`);
    expect(subjects.nodeEvents(NODE)).toBe(`cjs.events.node.${NODE}.*`);
    expect(subjects.jobTransitionedAll()).toBe("cjs.events.job.*.transitioned");
  });

  it("keeps every NATS-direct node-plane subject under the one prefix an agent may publish to", () => {
    const prefix = subjects.nodePlaneAll().slice(0, -1);
    expect(subjects.nodePlane("poll")).toBe("cjs.nodeplane.poll");
    expect(subjects.nodePlaneUploadOpen().startsWith(prefix)).toBe(true);
    expect(subjects.nodePlaneUpload("gw1", "up1")).toBe("cjs.nodeplane.artifact.gw1.up1");
    expect(subjects.nodePlaneUpload("gw1", "up1").startsWith(prefix)).toBe(true);
  });
});

describe("checkKvKey", () => {
  it("takes keys of each bucket's shape", () => {
    expect(checkKvKey(BUCKETS.jobs, `s07.local.${BIZ}.${JOB}`)).toBe(`s07.local.${BIZ}.${JOB}`);
    expect(checkKvKey(BUCKETS.apiKeys, KEY)).toBe(KEY);
    expect(checkKvKey(BUCKETS.apiKeyOwners, `${USER}.${KEY}`)).toBe(`${USER}.${KEY}`);
    expect(checkKvKey(BUCKETS.apiKeyOwners, `${NODE}.${KEY}`)).toBe(`${NODE}.${KEY}`);
    expect(checkKvKey(BUCKETS.userEmails, kvKey("local", "a.b@example.com"))).toBeTruthy();
    expect(checkKvKey(BUCKETS.creditEntries, `local.${BIZ}.i.job.${JOB}.1`)).toBeTruthy();
  });

  it("refuses a malformed id, a wildcard or a level too many or too few, as request.invalid", () => {
    for (const bad of HOSTILE) {
      expect(() => checkKvKey(BUCKETS.apiKeys, bad)).toThrow(MalformedIdError);
      expect(() => checkKvKey(BUCKETS.nodes, bad)).toThrow(MalformedIdError);
      expect(() => checkKvKey(BUCKETS.jobs, `s07.local.${BIZ}.${bad}`)).toThrow(MalformedIdError);
    }
    expect(() => checkKvKey(BUCKETS.apiKeys, "key_ecxUgow1WBd5BpAdgW2")).toThrow(MalformedIdError);
    expect(() => checkKvKey(BUCKETS.jobs, `s07.local.${BIZ}`)).toThrow(MalformedIdError);
    expect(() => checkKvKey(BUCKETS.jobs, `s07.local.${BIZ}.${JOB}.x`)).toThrow(MalformedIdError);
    expect(() => checkKvKey(BUCKETS.signingKeys, "*")).toThrow(MalformedIdError);
    expect(() => checkKvKey("cjs_not_listed", "a.>")).toThrow(MalformedIdError);
    expect(thrownBy(() => checkKvKey(BUCKETS.apiKeys, "key_*"))).toMatchObject({
      code: "request.invalid",
      details: { issues: [{ path: "key_id" }] },
    });
  });
});
