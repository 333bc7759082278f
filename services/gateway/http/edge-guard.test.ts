import { Agent, request } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardBodies } from "./edge-guard.js";

const SETTINGS = {
  CJS_HTTP_HEADERS_TIMEOUT_MS: 10_000,
  CJS_HTTP_BODY_TIMEOUT_MS: 10_000,
  CJS_HTTP_BODY_MIN_BYTES_PER_SECOND: 16_384,
  CJS_HTTP_IDLE_TIMEOUT_MS: 60_000,
  CJS_HTTP_KEEP_ALIVE_TIMEOUT_MS: 60_000,
  CJS_HTTP_MAX_CONNECTIONS_PER_IP: 0,
};

describe("the body guard on a kept-alive connection", () => {
  const app = Fastify();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let port = 0;

  beforeAll(async () => {
    guardBodies(app, SETTINGS, app.log);
    // Answers how many "close" listeners the request's socket holds once its body has been read.
    app.post("/echo", async (req) => ({ closeListeners: req.raw.socket.listenerCount("close") }));
    await app.listen({ host: "127.0.0.1", port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    agent.destroy();
    await app.close();
  });

  function post(): Promise<{ closeListeners: number; socketReused: boolean }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path: "/echo",
          method: "POST",
          agent,
          headers: { "content-type": "application/json" },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ ...JSON.parse(text), socketReused: req.reusedSocket }));
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify({ n: 1 }));
    });
  }

  it("leaves no listener of a finished request on the socket: the 50th request finds as many as the 2nd", async () => {
    const answers = [];
    for (let i = 0; i < 50; i++) answers.push(await post());
    expect(answers.slice(1).every((answer) => answer.socketReused)).toBe(true);
    expect(answers[49]?.closeListeners).toBe(answers[1]?.closeListeners);
  });
});
