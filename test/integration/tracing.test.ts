import { connect, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_NATS_HEADERS, RPC_ROUTES } from "../../shared/contract/index.js";
import { requestRpc, rpcSubject, serveRpc, subjects } from "../../shared/nats/index.js";
import { BaseConfig, createLogger } from "../../shared/runtime/index.js";
import { type RequestTrace, startTracing, TRACE_HEADERS } from "../../shared/tracing/index.js";
import { freePort } from "../harness/free-port.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { type OtlpReceiver, type ReceivedSpan, SPAN_KINDS, startOtlpReceiver } from "../harness/otlp-receiver.js";
import { startServiceProcess, type ServiceProcess } from "../harness/service-process.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";
import { z } from "zod";

/**
 * A request's id and W3C trace context reach every service it touches: in the services'
 * log lines (tracing off, in-process services with their lines captured) and in the spans
 * exported over OTLP (tracing on, real service processes posting to a stand-in collector).
 */
const JOB = { type: "shell", command: ["true"], pool_id: "no-nodes" };
const SUBMIT = RPC_ROUTES.submitJob;
const CALLER_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN_ID = "00f067aa0ba902b7";
const CALLER_TRACEPARENT = `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01`;

let nats: NatsHarness;

beforeAll(async () => {
  nats = await startNats();
});

afterAll(async () => {
  await nats?.stop();
});

/** The job id of a submit's envelope. */
function jobIdOf(body: unknown): string {
  return z.object({ payload: z.object({ job_id: z.string() }) }).parse(body).payload.job_id;
}

describe("request ids in the services' log lines (tracing off)", () => {
  const lines: Record<string, unknown>[] = [];
  const waiting = new Set<() => void>();
  const destination = {
    write: (line: string) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
      for (const check of waiting) check();
    },
  };
  /** The first line `match` accepts, once it is written (the gateway's access line follows its answer). */
  const lineWhere = (match: (line: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const check = () => {
        const found = lines.find(match);
        if (!found) return;
        waiting.delete(check);
        resolve(found);
      };
      waiting.add(check);
      check();
    });
  let system: RunningSystem;

  beforeAll(async () => {
    system = await startSystem(
      nats.url,
      { gateways: 1, schedulers: 1, registries: 1 },
      {},
      { loggerFor: (service) => createLogger({ service, level: "info", destination }) },
    );
  });

  afterAll(async () => {
    await system?.stop();
  });

  const schedulerLine = (jobId: string) =>
    lines.find((line) => line.service === "scheduler" && line.msg === "job submitted" && line.job_id === jobId);

  it("the scheduler's line for a job submitted over HTTP carries the request id the gateway answered with", async () => {
    const { client } = await signedInClient(system.gateways[0]!.baseUrl, await createTenant(system.gateways[0]!.nc));
    const response = await client.raw(SUBMIT.method, SUBMIT.path, JOB);
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id");
    expect(requestId).toBeTruthy();
    // The scheduler writes the line before it answers.
    expect(schedulerLine(jobIdOf(response.body))).toMatchObject({ request_id: requestId });
    // No trace context was sent and none is made while tracing is off.
    expect(response.headers.get("traceparent")).toBeNull();
    expect(schedulerLine(jobIdOf(response.body))).not.toHaveProperty("trace_id");
  });

  it("a caller's X-Request-ID and traceparent are passed on to the scheduler's line and the traceparent answered back", async () => {
    const { client } = await signedInClient(system.gateways[0]!.baseUrl, await createTenant(system.gateways[0]!.nc));
    const response = await client.raw(SUBMIT.method, SUBMIT.path, JOB, {
      "x-request-id": "caller-req-1",
      traceparent: CALLER_TRACEPARENT,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBe("caller-req-1");
    expect(response.headers.get("traceparent")).toBe(CALLER_TRACEPARENT);
    expect(schedulerLine(jobIdOf(response.body))).toMatchObject({
      request_id: "caller-req-1",
      trace_id: CALLER_TRACE_ID,
    });
    const accessLine = await lineWhere(
      (line) => line.service === "gateway" && line.msg === "request completed" && line.request_id === "caller-req-1",
    );
    expect(accessLine).toMatchObject({ route: SUBMIT.path, trace_id: CALLER_TRACE_ID });
  });

  it("a node-plane message over NATS with its own X-Request-ID and traceparent is logged under them by the service that handles it", async () => {
    const tenant = await createTenant(system.gateways[0]!.nc);
    const { client } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
    const apiKey = (await client.call("createApiKey", { name: "tracing" })).key;
    const sent = natsHeaders();
    sent.set(NODE_NATS_HEADERS.appId, tenant.app.app_id);
    sent.set(NODE_NATS_HEADERS.apiKey, apiKey);
    sent.set(NODE_NATS_HEADERS.requestId, "agent-req-1");
    sent.set(NODE_NATS_HEADERS.traceparent, CALLER_TRACEPARENT);
    const body = {
      name: "traced-node",
      hostname: "traced.local",
      capacity: { cpu: 1, memory_mb: 512, gpu: 0, slots: 1 },
      agent_version: "test",
      pool_id: "traced",
    };
    const reply = await system.gateways[0]!.nc.request(subjects.nodePlane("register"), JSON.stringify(body), {
      headers: sent,
      timeout: 10_000,
    });
    const nodeId = z.object({ payload: z.object({ node_id: z.string() }) }).parse(reply.json()).payload.node_id;
    expect(
      lines.find(
        (line) => line.service === "node-registry" && line.msg === "node registered" && line.node_id === nodeId,
      ),
    ).toMatchObject({
      request_id: "agent-req-1",
      trace_id: CALLER_TRACE_ID,
    });
  });

  it("a malformed traceparent is ignored, not passed on", async () => {
    const { client } = await signedInClient(system.gateways[0]!.baseUrl, await createTenant(system.gateways[0]!.nc));
    const response = await client.raw(SUBMIT.method, SUBMIT.path, JOB, {
      traceparent: `00-${"0".repeat(32)}-${CALLER_SPAN_ID}-01`,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("traceparent")).toBeNull();
    expect(schedulerLine(jobIdOf(response.body))).not.toHaveProperty("trace_id");
  });
});

describe("trace context in NATS headers, with and without an OTLP endpoint", () => {
  let nc: NatsConnection;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    nc = await connect({ servers: nats.url, name: "test-tracing" });
    receiver = await startOtlpReceiver();
  });

  afterAll(async () => {
    await nc?.close();
    await receiver?.close();
  });

  it("without an endpoint no span is made or sent; with one the same call is a client span, and only it is exported", async () => {
    const seen: { requestId: string | undefined; traceparent: string | undefined }[] = [];
    // Any RPC will do: nothing else answers on this server now. One a replica answers on a subject of its own has a simple command.
    const instance = "tracing-echo";
    const subject = rpcSubject("concurrencyInUse", instance);
    const command = { scope: "test", partition: 0 };
    const echo = nc.subscribe(subject, {
      callback: (_error, msg) => {
        seen.push({
          requestId: msg.headers?.get(TRACE_HEADERS.requestId),
          traceparent: msg.headers?.get(TRACE_HEADERS.traceparent) || undefined,
        });
        msg.respond(JSON.stringify({ ok: true, payload: { in_use: 0, owned: true } }), { headers: natsHeaders() });
      },
    });
    const logger = createLogger({ service: "test", level: "silent" });
    const off = startTracing("test", BaseConfig.parse({ OTEL_BSP_SCHEDULE_DELAY: "1" }), logger);
    expect(off.enabled).toBe(false);
    await requestRpc(nc, "concurrencyInUse", command, { address: instance, trace: { requestId: "untraced-1" } });
    expect(seen[0]).toEqual({ requestId: "untraced-1", traceparent: undefined });

    const on = startTracing("test", BaseConfig.parse({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }), logger);
    await requestRpc(nc, "concurrencyInUse", command, { address: instance, trace: { requestId: "traced-1" } });
    // Shutting down sends every span made so far: after it, the receiver holds all there is.
    await on.shutdown();
    echo.unsubscribe();
    expect(seen[1]?.requestId).toBe("traced-1");
    expect(receiver.spans).toHaveLength(1);
    const [span] = receiver.spans;
    expect(span).toMatchObject({
      service: "cjs-test",
      name: subject,
      kind: SPAN_KINDS.client,
      parentSpanId: "",
      attributes: { "cjs.request_id": "traced-1" },
    });
    expect(seen[1]?.traceparent).toBe(`00-${span!.traceId}-${span!.spanId}-01`);
  });

  it("with tracing on, a call that no request started (no request id) still makes the served span its child", async () => {
    const instance = "tracing-served";
    const subject = rpcSubject("concurrencyInUse", instance);
    const handled: (RequestTrace | undefined)[] = [];
    const logger = createLogger({ service: "test", level: "silent" });
    const served = serveRpc(nc, "concurrencyInUse", {
      address: instance,
      queue: "test",
      logger,
      handle: async (_command, { trace }) => {
        handled.push(trace);
        return { in_use: 0, owned: true };
      },
    });
    await nc.flush();
    const before = receiver.spans.length;
    const on = startTracing("test", BaseConfig.parse({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }), logger);
    await requestRpc(nc, "concurrencyInUse", { scope: "test", partition: 0 }, { address: instance });
    await on.shutdown();
    served.unsubscribe();
    const spans = receiver.spans.slice(before);
    const client = spans.find((span) => span.kind === SPAN_KINDS.client);
    const server = spans.find((span) => span.kind === SPAN_KINDS.server);
    expect(client).toMatchObject({ name: subject, parentSpanId: "" });
    expect(client!.attributes).not.toHaveProperty("cjs.request_id");
    expect(server).toMatchObject({ name: subject, traceId: client!.traceId, parentSpanId: client!.spanId });
    // What the handler passes on names its own span: its calls are the server span's children.
    expect(handled).toEqual([
      { requestId: undefined, traceparent: `00-${server!.traceId}-${server!.spanId}-01`, tracestate: undefined },
    ]);
  });
});

/** A gateway and a scheduler as production runs them, with `otel` added to their environment. */
async function startTracedPair(otel: Record<string, string>) {
  const env = {
    NATS_URL: nats.url,
    CJS_HOST: "127.0.0.1",
    CJS_PORT: "0",
    CJS_OPS_HOST: "127.0.0.1",
    CJS_OPS_PORT: "0",
    LOG_LEVEL: "info",
    ...otel,
  };
  const scheduler = startServiceProcess({ service: "scheduler", env });
  const gateway = startServiceProcess({ service: "gateway", env });
  const processes: ServiceProcess[] = [scheduler, gateway];
  try {
    // Both waits begin at once: a line logged before its wait begins is not seen (the gateway, started from a
    // bundle, listened before the scheduler was ready, and the test waited a minute for a line already gone).
    const [, listening] = await Promise.all([
      scheduler.waitForLog((line) => line.msg === "scheduler ready", 60_000),
      gateway.waitForLog((line) => typeof line.address === "string", 60_000),
    ]);
    return {
      scheduler,
      gateway,
      baseUrl: String(listening.address),
      stop: () => Promise.all(processes.map((process) => process.stop())),
    };
  } catch (error) {
    await Promise.all(processes.map((process) => process.kill()));
    throw error;
  }
}

describe("spans exported over OTLP (real processes)", () => {
  let receiver: OtlpReceiver;
  let pair: Awaited<ReturnType<typeof startTracedPair>>;
  let nc: NatsConnection;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    pair = await startTracedPair({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: "50" });
    nc = await connect({ servers: nats.url, name: "test-tracing-processes" });
  }, 120_000);

  afterAll(async () => {
    await nc?.close();
    await pair?.stop();
    await receiver?.close();
  });

  /** The gateway's route span, its call to the scheduler and the scheduler's handling of it, once all three have arrived. */
  async function submitSpans(traceId: string) {
    const ofTrace = (spans: readonly ReceivedSpan[]) => spans.filter((span) => span.traceId === traceId);
    const find = (spans: readonly ReceivedSpan[]) => {
      const mine = ofTrace(spans);
      const route = mine.find((span) => span.service === "cjs-gateway" && span.kind === SPAN_KINDS.server);
      const call = mine.find(
        (span) =>
          span.service === "cjs-gateway" && span.kind === SPAN_KINDS.client && span.name === subjects.jobSubmit(),
      );
      const handled = mine.find(
        (span) =>
          span.service === "cjs-scheduler" && span.kind === SPAN_KINDS.server && span.name === subjects.jobSubmit(),
      );
      return route && call && handled ? { route, call, handled } : undefined;
    };
    return find(await receiver.waitFor((spans) => find(spans) !== undefined))!;
  }

  it("a submit is one trace: the route span, its client span, and the scheduler's server span as that client span's child", async () => {
    const { client } = await signedInClient(pair.baseUrl, await createTenant(nc));
    expect((await fetch(`${pair.baseUrl}/healthz`)).status).toBe(200);
    // Waited for from before the submit: the scheduler writes it before it answers.
    const submitted = pair.scheduler.waitForLog((logged) => logged.msg === "job submitted");
    const response = await client.raw(SUBMIT.method, SUBMIT.path, JOB);
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id")!;
    const traceparent = response.headers.get("traceparent")!;
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, routeSpanId] = traceparent.split("-");

    const { route, call, handled } = await submitSpans(traceId!);
    expect(route).toMatchObject({ spanId: routeSpanId, parentSpanId: "", name: `POST ${SUBMIT.path}` });
    expect(route.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": SUBMIT.path,
      "http.response.status_code": 200,
      "cjs.request_id": requestId,
    });
    // Never the URL, its query or the headers: a signature or a token may be in them.
    expect(Object.keys(route.attributes).filter((key) => key.startsWith("url.") || key.includes("header"))).toEqual([]);
    expect(call.parentSpanId).toBe(route.spanId);
    expect(handled.parentSpanId).toBe(call.spanId);
    expect(handled.attributes).toMatchObject({
      "cjs.request_id": requestId,
      "messaging.destination.name": subjects.jobSubmit(),
    });

    expect(await submitted).toMatchObject({ job_id: jobIdOf(response.body), request_id: requestId, trace_id: traceId });
    // Spans leave in the order they end: the probe's, had there been one, would be here by now.
    expect(receiver.spans.filter((span) => span.name.includes("/healthz"))).toEqual([]);
  });

  it("a caller's traceparent is continued: the gateway's span is its child, in its trace", async () => {
    const { client } = await signedInClient(pair.baseUrl, await createTenant(nc));
    const response = await client.raw(SUBMIT.method, SUBMIT.path, JOB, { traceparent: CALLER_TRACEPARENT });
    expect(response.status).toBe(200);
    const [, traceId, spanId] = response.headers.get("traceparent")!.split("-");
    expect(traceId).toBe(CALLER_TRACE_ID);
    expect(spanId).not.toBe(CALLER_SPAN_ID);
    const { route, handled } = await submitSpans(CALLER_TRACE_ID);
    expect(route).toMatchObject({ spanId, parentSpanId: CALLER_SPAN_ID });
    expect(handled.traceId).toBe(CALLER_TRACE_ID);
  });
});

describe("a collector that is down", () => {
  it("fails no request, and the processes still stop cleanly", async () => {
    const refused = `http://127.0.0.1:${await freePort()}`;
    const pair = await startTracedPair({ OTEL_EXPORTER_OTLP_ENDPOINT: refused, OTEL_BSP_SCHEDULE_DELAY: "1" });
    const nc = await connect({ servers: nats.url, name: "test-tracing-down" });
    try {
      const { client } = await signedInClient(pair.baseUrl, await createTenant(nc));
      for (let round = 0; round < 3; round += 1) {
        const response = await client.raw(SUBMIT.method, SUBMIT.path, JOB);
        expect(response.status).toBe(200);
      }
    } finally {
      await nc.close();
      await pair.stop();
    }
    expect(await pair.scheduler.exited).toEqual({ code: 0, signal: null });
    expect(await pair.gateway.exited).toEqual({ code: 0, signal: null });
  }, 120_000);
});

describe("tracing settings", () => {
  it("an OTLP endpoint that is not an http(s) URL stops a service at start with exit 2 and a line naming the variable", async () => {
    const scheduler = startServiceProcess({
      service: "scheduler",
      env: { NATS_URL: nats.url, CJS_OPS_PORT: "0", OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
    });
    const { code } = await scheduler.exited;
    expect(code, scheduler.output()).toBe(2);
    expect(scheduler.output()).toContain("OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL");
  });
});
