/**
 * The gateway's access log: one line per request, naming the operation's route pattern,
 * never the URL as sent, so a signature or token in a query string never reaches the log.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { createTenant, signedInClient, startGateway, type RunningGateway } from "../harness/system.js";

let nats: NatsHarness;
let gateway: RunningGateway;
let nc: NatsConnection;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  nats = await startNats();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  gateway = await startGateway(nats.url, {}, { logger: pino({ level: "info" }, sink) });
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.close();
  await gateway?.stop();
  await nats?.stop();
});

describe("the gateway's access log", () => {
  it("writes one line per request with its route pattern, status and time, and never the query string", async () => {
    const secret = "sig-SHOULD-NOT-BE-LOGGED-41f7";
    const url = `${gateway.baseUrl}/api/compute/artifacts/download/job_0000000000000000000/out.txt?expires=1&sig=${secret}`;
    const response = await fetch(url);
    const requestId = response.headers.get("x-request-id");
    await response.arrayBuffer();

    const completed = lines.filter((line) => line.request_id === requestId && line.msg === "request completed");
    expect(completed, JSON.stringify(completed)).toHaveLength(1);
    expect(completed[0]).toMatchObject({
      method: "GET",
      route: "/api/compute/artifacts/download/:jobId/:artifactId",
      status: response.status,
    });
    expect(typeof completed[0]!.ms).toBe("number");
    expect(JSON.stringify(lines)).not.toContain(secret);
  });
});

describe("the gateway's log of a 503", () => {
  it("names the NATS failure behind it, which the caller's answer does not", async () => {
    // No scheduler runs: a submit finds no responder.
    const { client } = await signedInClient(gateway.baseUrl, await createTenant(nc));
    const refused = await client
      .call("submitJob", { type: "shell", command: ["true"] })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "service.unavailable" });
    // One line for the request, its access line, with the code and the cause.
    const line = lines.find((entry) => entry.msg === "request completed" && entry.code === "service.unavailable");
    expect(line).toMatchObject({ status: 503, route: "/api/compute/jobs/submit" });
    expect(line?.cause).toMatch(/no responders/i);
    expect(lines.filter((entry) => entry.request_id === line?.request_id)).toHaveLength(1);
    expect(JSON.stringify(refused)).not.toMatch(/no responders/i);
  });
});
