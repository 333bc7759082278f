import { describe, expect, it } from "vitest";
import { natsUrlProblem } from "./config.js";

describe("natsUrlProblem", () => {
  it("accepts nats://, tls:// and bare host:port entries, alone or in a list", () => {
    for (const list of [
      "nats://127.0.0.1:4222",
      "tls://nats.example:4222",
      "localhost",
      "[::1]:4222",
      "nats://a:4222, nats://b:4222,c:4222",
    ]) {
      expect(natsUrlProblem(list), list).toBeUndefined();
    }
  });

  it("names the entry that is not a NATS server URL, and why", () => {
    expect(natsUrlProblem("not a url")).toMatch(/^"not a url" is not a NATS server URL/);
    expect(natsUrlProblem("nats://a:4222,nats://:99999")).toMatch(/^"nats:\/\/:99999" is not a NATS server URL/);
    expect(natsUrlProblem("ws://a:80")).toMatch(/scheme must be nats:\/\/ or tls:\/\//);
    expect(natsUrlProblem("nats://a:0")).toMatch(/port must be 1 to 65535/);
    expect(natsUrlProblem("nats://a:4222,")).toMatch(/empty entry/);
  });

  it("refuses credentials in the URL without repeating them", () => {
    const problem = natsUrlProblem("nats://svc:hunter2@a:4222");
    expect(problem).toMatch(/NATS_USER and NATS_PASSWORD/);
    expect(problem).not.toContain("hunter2");
  });
});
