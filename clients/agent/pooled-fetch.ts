import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";

export interface PooledFetch {
  /** A `fetch` for what the agent sends: string, byte or stream bodies; the whole answer read into memory. */
  fetch: typeof fetch;
  /** Closes every connection the pool holds, idle or busy. */
  close(): void;
}

/**
 * `fetch` over `node:http` with a keep-alive pool of the agent's own. Node's global
 * fetch shares one pool per process and, when a request in flight is aborted, may open a
 * connection it never uses; an agent stopped inside a longer-lived process (`make dev`,
 * tests) would leave it behind and hold up the gateway's shutdown. With its own pool,
 * stopping the agent closes everything it opened.
 */
export function pooledFetch(): PooledFetch {
  const pools = { "http:": new HttpAgent({ keepAlive: true }), "https:": new HttpsAgent({ keepAlive: true }) };

  const send = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
    new Promise((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : input);
      if (url.protocol !== "http:" && url.protocol !== "https:")
        return reject(new TypeError(`unsupported protocol ${url.protocol}`));
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const options = {
        method: init.method ?? "GET",
        headers,
        agent: pools[url.protocol],
        ...(init.signal ? { signal: init.signal } : {}),
      };
      const onResponse = (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("close", () => {
          if (!response.complete) return reject(new TypeError("the connection closed before the answer was complete"));
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            for (const item of Array.isArray(value) ? value : [value ?? ""]) answerHeaders.append(name, item);
          }
          const status = response.statusCode ?? 500;
          const empty = status === 204 || status === 304 || init.method === "HEAD";
          resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers: answerHeaders }));
        });
      };
      const request =
        url.protocol === "https:" ? httpsRequest(url, options, onResponse) : httpRequest(url, options, onResponse);
      request.on("error", reject);
      const body = init.body;
      if (body === undefined || body === null) request.end();
      else if (typeof body === "string" || body instanceof Uint8Array) request.end(body);
      else if (body instanceof ReadableStream) {
        const source = Readable.fromWeb(body as NodeReadableStream<Uint8Array>);
        source.on("error", (error) => request.destroy(error));
        source.pipe(request);
      } else reject(new TypeError("unsupported request body"));
    });

  return {
    fetch: send as typeof fetch,
    close() {
      pools["http:"].destroy();
      pools["https:"].destroy();
    },
  };
}
