import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pooledFetch } from "./pooled-fetch.js";

let server: Server;
let base: string;
const sockets = new Set<Socket>();

beforeEach(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.url === "/slow") return void setTimeout(() => response.end("late"), 5_000).unref();
      response.writeHead(201, { "content-type": "application/json", "x-echo": request.headers["x-test"] ?? "" });
      response.end(
        JSON.stringify({
          method: request.method,
          body: Buffer.concat(chunks).toString(),
          length: request.headers["content-length"] ?? null,
        }),
      );
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("pooledFetch", () => {
  it("sends a string body with its headers and returns status, headers and body", async () => {
    const pool = pooledFetch();
    const response = await pool.fetch(`${base}/x`, {
      method: "POST",
      headers: { "x-test": "yes", "content-type": "application/json" },
      body: '{"a":1}',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-echo")).toBe("yes");
    expect(await response.json()).toEqual({ method: "POST", body: '{"a":1}', length: "7" });
    pool.close();
  });

  it("streams a body", async () => {
    const pool = pooledFetch();
    const body = Readable.toWeb(Readable.from([Buffer.from("ab"), Buffer.from("cd")])) as ReadableStream<Uint8Array>;
    const response = await pool.fetch(`${base}/upload`, {
      method: "PUT",
      headers: { "content-length": "4" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(await response.json()).toEqual({ method: "PUT", body: "abcd", length: "4" });
    pool.close();
  });

  it("ends a request when its signal aborts, and closing the pool leaves no connection open", async () => {
    const pool = pooledFetch();
    await (await pool.fetch(`${base}/warm`)).text();
    const stop = new AbortController();
    const pending = pool.fetch(`${base}/slow`, { signal: stop.signal });
    setTimeout(() => stop.abort(), 50);
    await expect(pending).rejects.toThrow();
    pool.close();
    await expect.poll(() => sockets.size).toBe(0);
  });
});
