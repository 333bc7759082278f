import { describe, expect, it } from "vitest";
import { kvKey, subjects } from "./names.js";

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
    expect(subjects.jobLogs("job_1", 2)).toBe("cjs.logs.job_1.2");
    expect(subjects.jobLogsOfJob("job_1")).toBe("cjs.logs.job_1.*");
    expect(subjects.jobLogDrops("job_1")).toBe("cjs.logdrops.job_1");
    expect(subjects.jobLogDrops("job_1").startsWith("cjs.logs.")).toBe(false);
  });

  it("keeps every NATS-direct node-plane subject under the one prefix an agent may publish to", () => {
    const prefix = subjects.nodePlaneAll().slice(0, -1);
    expect(subjects.nodePlane("poll")).toBe("cjs.nodeplane.poll");
    expect(subjects.nodePlaneUploadOpen().startsWith(prefix)).toBe(true);
    expect(subjects.nodePlaneUpload("gw1", "up1")).toBe("cjs.nodeplane.artifact.gw1.up1");
    expect(subjects.nodePlaneUpload("gw1", "up1").startsWith(prefix)).toBe(true);
  });
});
