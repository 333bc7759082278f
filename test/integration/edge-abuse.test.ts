import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { readResponse, type RawHttpResponse } from "../harness/edge-probe.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

/**
 * Clients that cost the gateway a connection without sending a request in time: bodies
 * trickled a byte at a time, headers that never end, and floods of connections from one
 * address. Each is cut off before any credential is read, and a client at another address
 * is served meanwhile. Loopback has many addresses: the abusers connect from 127.0.0.2 and
 * 127.0.0.3, the tenant from 127.0.0.1.
 */
const BODY_TIMEOUT_MS = 1_000;
const MIN_BYTES_PER_SECOND = 1_000;
const CONNECTIONS_PER_IP = 40;

let nats: NatsHarness;
let system: RunningSystem;
let baseUrl: string;
let port: number;
let user: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 1, registries: 1 },
    {
      CJS_HTTP_HEADERS_TIMEOUT_MS: "1000",
      CJS_HTTP_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
      CJS_HTTP_BODY_MIN_BYTES_PER_SECOND: String(MIN_BYTES_PER_SECOND),
      CJS_HTTP_MAX_CONNECTIONS_PER_IP: String(CONNECTIONS_PER_IP),
    },
  );
  baseUrl = system.gateways[0]!.baseUrl;
  port = Number(new URL(baseUrl).port);
  ({ client: user } = await signedInClient(baseUrl, await createTenant(system.gateways[0]!.nc)));
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

async function connectFrom(localAddress: string): Promise<Socket> {
  const socket = connect({ host: "127.0.0.1", port, localAddress });
  await once(socket, "connect");
  return socket;
}

/** What became of a connection: the response it got (if any) once the gateway closed it. */
async function outcome(socket: Socket): Promise<RawHttpResponse | null> {
  // A connection the gateway cuts while bytes are still trickling in may end in a reset (ECONNRESET, EPIPE) rather
  // than a clean close: either is the cut this file looks for, and "close" follows both.
  socket.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const response = await readResponse(socket).catch(() => null);
  socket.resume();
  await closed;
  return response;
}

/** Writes one byte of `text` every `everyMs` until the connection closes. */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable || at >= text.length) return;
    socket.write(text[at++]!);
  }, everyMs);
  socket.once("close", () => clearInterval(timer));
}

const SUBMIT_HEAD =
  "POST /api/compute/jobs/submit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n";

async function submitWorks(): Promise<void> {
  const submitted = await user.raw("POST", "/api/compute/jobs/submit", {
    type: "shell",
    command: ["true"],
    pool_id: "abuse-no-nodes",
  });
  expect(submitted.status).toBe(200);
}

describe("slow request bodies", () => {
  it("trickled by many connections before any credential, each is answered 408 request.timeout and closed, while another client is served", async () => {
    const sockets = await Promise.all(Array.from({ length: 30 }, () => connectFrom("127.0.0.2")));
    const outcomes = sockets.map((socket) => {
      socket.write(SUBMIT_HEAD);
      trickle(socket, "x".repeat(100_000), 100);
      return outcome(socket);
    });
    await submitWorks();
    for (const response of await Promise.all(outcomes)) {
      expect(response?.status).toBe(408);
      expect(JSON.parse(response!.body)).toMatchObject({ status: "ERROR", code: "request.timeout" });
      expect(response?.headers.connection).toBe("close");
    }
  });

  it("a body that keeps the minimum rate may take longer than the timeout and is served", async () => {
    const body = JSON.stringify({ email: "nobody@example.test", password: `x${" ".repeat(6_000)}` });
    const socket = await connectFrom("127.0.0.2");
    socket.write(
      `POST /api/auth/LOGIN_EMAIL HTTP/1.1\r\nHost: x\r\nX-App-ID: abuse\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    // 1 000 bytes every 250 ms: 4 000 bytes a second, over about 1.5 s in all.
    let at = 0;
    const timer = setInterval(() => {
      socket.write(body.slice(at, at + 1_000));
      at += 1_000;
      if (at >= body.length) clearInterval(timer);
    }, 250);
    const response = await readResponse(socket);
    clearInterval(timer);
    socket.destroy();
    // The body arrived whole and was judged: an unknown application, not a timeout.
    expect(response.status).toBe(401);
    expect(JSON.parse(response.body)).toMatchObject({ code: "app.unknown" });
  });

  it("trickled after its request was refused (an upload without a valid signature), the connection is cut as well", async () => {
    const socket = await connectFrom("127.0.0.2");
    socket.write(
      "PUT /api/compute/artifacts/upload/job_00000000000000000000/out.txt?expires=1&signature=x HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n",
    );
    trickle(socket, "x".repeat(100_000), 100);
    const response = await outcome(socket);
    expect({ status: response?.status, code: JSON.parse(response?.body ?? "{}").code }).toEqual({
      status: 403,
      code: "url.signature_invalid",
    });
  });
});

describe("slow request headers", () => {
  it("that never end are answered 408 request.timeout and closed", async () => {
    const socket = await connectFrom("127.0.0.2");
    socket.write("POST /api/compute/jobs/submit HTTP/1.1\r\nHost: x\r\n");
    trickle(socket, "X-Slow: ".padEnd(10_000, "y"), 100);
    const response = await outcome(socket);
    expect(response?.status).toBe(408);
    expect(JSON.parse(response!.body)).toMatchObject({ code: "request.timeout" });
  });
});

describe("a flood of connections from one address", () => {
  it("past the per-address budget is answered 429 rate.connections_exceeded and closed, while another address is served", async () => {
    const flood = await Promise.all(Array.from({ length: CONNECTIONS_PER_IP + 20 }, () => connectFrom("127.0.0.3")));
    const outcomes = flood.map((socket) => outcome(socket));
    await submitWorks();
    const responses = await Promise.all(outcomes);
    const refused = responses.filter((response) => response?.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(20);
    for (const response of refused) {
      expect(JSON.parse(response!.body)).toMatchObject({
        code: "rate.connections_exceeded",
        details: { limit: CONNECTIONS_PER_IP },
      });
      expect(response?.headers["retry-after"]).toBe("1");
    }
    // The others sent nothing: the headers timeout closed them (408). None is left open.
    for (const response of responses.filter((each) => each?.status !== 429)) expect(response?.status).toBe(408);
    // The budget is given back as connections close: the address is served again.
    const again = await connectFrom("127.0.0.3");
    again.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    expect((await readResponse(again)).status).toBe(200);
    again.destroy();
  });
});
