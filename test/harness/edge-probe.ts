import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { expect } from "vitest";
import type { ComputeClient, RawResponse } from "./client.js";
import { ErrorEnvelope, SuccessEnvelope } from "../../shared/contract/index.js";

/** POSTs `value` as its JSON text, whatever it is (`null`, a number, a string, an array, an object). */
export function postJson(client: ComputeClient, path: string, value: unknown): Promise<RawResponse> {
  return client.raw("POST", path, JSON.stringify(value), { "content-type": "application/json" });
}

/** The answer is the error envelope (no payload) with a 4xx status; returns the envelope. */
export function expectRefusal(response: RawResponse, context = ""): ErrorEnvelope {
  expect(response.status, context).toBeGreaterThanOrEqual(400);
  expect(response.status, context).toBeLessThan(500);
  const envelope = ErrorEnvelope.safeParse(response.body);
  expect(envelope.success, `${context} ${JSON.stringify(response.body)?.slice(0, 300)}`).toBe(true);
  expect(response.body, context).not.toHaveProperty("payload");
  return envelope.data!;
}

/** The answer is the success envelope, or a 4xx error envelope: never a 5xx, never something else. */
export function expectEnvelopeWithout5xx(response: RawResponse, context = ""): void {
  if (response.status === 200) {
    expect(SuccessEnvelope.safeParse(response.body).success, context).toBe(true);
    return;
  }
  expectRefusal(response, context);
}

/** One HTTP/1.1 response read off a raw socket: status, lower-cased headers and body text. */
export interface RawHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parseResponse(buffered: Buffer): RawHttpResponse | null {
  const headEnd = buffered.indexOf("\r\n\r\n");
  if (headEnd === -1) return null;
  const [statusLine, ...lines] = buffered.subarray(0, headEnd).toString("latin1").split("\r\n");
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
  );
  const length = Number(headers["content-length"] ?? 0);
  if (buffered.length < headEnd + 4 + length) return null;
  return {
    status: Number(statusLine!.split(" ")[1]),
    headers,
    body: buffered.subarray(headEnd + 4, headEnd + 4 + length).toString("utf8"),
  };
}

/**
 * Reads one whole response (with a `Content-Length`) from the socket as its data arrives;
 * fails if the connection closes before it is complete.
 */
export function readResponse(socket: Socket): Promise<RawHttpResponse> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const response = parseResponse(buffered);
      if (!response) return;
      socket.off("data", onData).off("close", onClose);
      socket.pause();
      resolve(response);
    };
    const onClose = () => reject(new Error(`connection closed after ${buffered.length} bytes of a response`));
    socket.on("data", onData).on("close", onClose);
    socket.resume();
  });
}

/** A raw TCP connection to `baseUrl` (`http://host:port`), for what fetch hides: connection reuse and half-sent bodies. */
export async function openSocket(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  await once(socket, "connect");
  return socket;
}
