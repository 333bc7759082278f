import { describe, expect, it } from "vitest";
import { ApiError, NetworkError } from "./errors.js";
import { Transport } from "./transport.js";

/**
 * The retry rules of the transport, against a scripted `fetch`: each call takes the next
 * answer of the script. (The SDK's behaviour against the real gateway is tested in
 * test/integration/sdk.test.ts.)
 */
type Scripted = { status: number; code?: string; retryAfter?: string } | "network-failure" | { fail: Error };

function scriptedFetch(script: Scripted[]) {
  const calls: Array<{ url: string; headers: Record<string, string> }> = [];
  const send = (async (url: string, init: RequestInit) => {
    calls.push({ url, headers: init.headers as Record<string, string> });
    const next = script[calls.length - 1];
    if (next === undefined) throw new Error("the script ran out");
    if (next === "network-failure") throw new TypeError("fetch failed");
    if ("fail" in next) throw next.fail;
    const body =
      next.status < 300
        ? { status: "SUCCESS", message: "ok", payload: {} }
        : { status: "ERROR", code: next.code, message: "refused" };
    return new Response(JSON.stringify(body), {
      status: next.status,
      headers: {
        "content-type": "application/json",
        "x-request-id": `req-${calls.length}`,
        ...(next.retryAfter !== undefined ? { "retry-after": next.retryAfter } : {}),
      },
    });
  }) as unknown as typeof fetch;
  return { send, calls };
}

function transport(send: typeof fetch) {
  return new Transport(
    {
      baseUrl: "http://gateway.test/",
      appId: "app",
      credentials: { apiKey: "k" },
      fetch: send,
      retry: { baseDelayMs: 1, maxDelayMs: 2000, maxRetries: 3 },
    },
    async () => {
      throw new Error("no refresh here");
    },
  );
}

describe("retries", () => {
  it("a 503 of a request that may be sent twice is retried until it succeeds", async () => {
    const { send, calls } = scriptedFetch([
      { status: 503, code: "service.unavailable", retryAfter: "0" },
      { status: 503, code: "service.unavailable" },
      { status: 200 },
    ]);
    const response = await transport(send).request("POST", "/x", "{}", { idempotent: true });
    expect(response.status).toBe(200);
    expect(calls).toHaveLength(3);
    expect(calls[0]!.url).toBe("http://gateway.test/x");
    expect(calls[0]!.headers).toMatchObject({ "x-app-id": "app", "x-api-key": "k" });
  });

  it("a 503 of a request that must not run twice and carries no Idempotency-Key is not retried: it may have been done", async () => {
    const { send, calls } = scriptedFetch([
      { status: 503, code: "service.unavailable", retryAfter: "0" },
      { status: 200 },
    ]);
    await expect(transport(send).request("POST", "/x", "{}", { idempotent: false })).rejects.toMatchObject({
      code: "service.unavailable",
      status: 503,
      requestId: "req-1",
      retryAfterSeconds: 0,
    });
    expect(calls).toHaveLength(1);
  });

  it("429 and queue.full refuse before any change, so even a submit is retried", async () => {
    const { send, calls } = scriptedFetch([
      { status: 429, code: "rate.limited", retryAfter: "0" },
      { status: 503, code: "queue.full", retryAfter: "0" },
      { status: 200 },
    ]);
    expect((await transport(send).request("POST", "/x", "{}", { idempotent: false })).status).toBe(200);
    expect(calls).toHaveLength(3);
  });

  it("a Retry-After beyond the cap is not waited out: the error goes to the caller at once", async () => {
    const { send, calls } = scriptedFetch([{ status: 429, code: "quota.jobs_per_hour_exceeded", retryAfter: "1800" }]);
    const refused = await transport(send)
      .request("POST", "/x", "{}", { idempotent: true })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: "quota.jobs_per_hour_exceeded", retryAfterSeconds: 1800 });
    expect(calls).toHaveLength(1);
  });

  it("gives up after maxRetries with the last refusal", async () => {
    const { send, calls } = scriptedFetch(
      Array.from({ length: 4 }, () => ({ status: 503, code: "service.unavailable", retryAfter: "0" })),
    );
    await expect(transport(send).request("POST", "/x", "{}", { idempotent: true })).rejects.toMatchObject({
      code: "service.unavailable",
      requestId: "req-4",
    });
    expect(calls).toHaveLength(4);
  });

  it("a lost connection is retried for a request that may be sent twice, and reported as NetworkError otherwise", async () => {
    const retried = scriptedFetch(["network-failure", { status: 200 }]);
    expect((await transport(retried.send).request("POST", "/x", "{}", { idempotent: true })).status).toBe(200);
    const notRetried = scriptedFetch(["network-failure", { status: 200 }]);
    await expect(transport(notRetried.send).request("POST", "/x", "{}", { idempotent: false })).rejects.toBeInstanceOf(
      NetworkError,
    );
    expect(notRetried.calls).toHaveLength(1);
  });

  it("a request that carries an Idempotency-Key is retried after a 503 and a lost connection, with the same key each time", async () => {
    const { send, calls } = scriptedFetch([
      { status: 503, code: "service.unavailable", retryAfter: "0" },
      "network-failure",
      { status: 200 },
    ]);
    const response = await transport(send).request("POST", "/x", "{}", {
      idempotent: false,
      headers: { "Idempotency-Key": "k-1" },
    });
    expect(response.status).toBe(200);
    expect(calls.map((call) => call.headers["Idempotency-Key"])).toEqual(["k-1", "k-1", "k-1"]);
  });

  it("idempotency.in_progress refuses before any change, so it is retried", async () => {
    const { send, calls } = scriptedFetch([
      { status: 409, code: "idempotency.in_progress", retryAfter: "0" },
      { status: 200 },
    ]);
    expect(
      (await transport(send).request("POST", "/x", "{}", { idempotent: false, headers: { "idempotency-key": "k-2" } }))
        .status,
    ).toBe(200);
    expect(calls).toHaveLength(2);
  });

  it("an error code this SDK does not know is passed through as it is", async () => {
    const { send } = scriptedFetch([{ status: 409, code: "something.new" }]);
    await expect(transport(send).request("POST", "/x", "{}", { idempotent: true })).rejects.toMatchObject({
      code: "something.new",
      status: 409,
    });
  });
});

/** A failed fetch as Node's undici reports it: `fetch failed`, caused by the socket's or the resolver's error. */
function fetchFailed(cause: Error): { fail: Error } {
  return { fail: new TypeError("fetch failed", { cause }) };
}

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe("network errors", () => {
  it("name the URL (without its query) and the cause, and are retried while a retry may mend them", async () => {
    const refused = withCode("connect ECONNREFUSED 127.0.0.1:8080", "ECONNREFUSED");
    const { send, calls } = scriptedFetch(Array.from({ length: 4 }, () => fetchFailed(refused)));
    const failure = await transport(send)
      .request("GET", "/api/compute/artifacts/download/j/a?signature=secret", undefined, { idempotent: true })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NetworkError);
    expect(failure).toMatchObject({
      code: "network.error",
      reason: "ECONNREFUSED",
      url: "http://gateway.test/api/compute/artifacts/download/j/a",
      message:
        "Could not reach http://gateway.test/api/compute/artifacts/download/j/a: connection refused (connect ECONNREFUSED 127.0.0.1:8080)",
    });
    expect((failure as Error).message).not.toContain("secret");
    expect(calls).toHaveLength(4);
  });

  it("an unknown host name and a refused certificate are not retried: they answer the same every time", async () => {
    for (const [cause, words] of [
      [withCode("getaddrinfo ENOTFOUND gateway.invalid", "ENOTFOUND"), "host name not found (DNS)"],
      [withCode("self-signed certificate", "DEPTH_ZERO_SELF_SIGNED_CERT"), "TLS handshake failed"],
    ] as const) {
      const { send, calls } = scriptedFetch([fetchFailed(cause), { status: 200 }]);
      const failure = await transport(send)
        .request("POST", "/x", "{}", { idempotent: true })
        .catch((error: unknown) => error);
      expect((failure as Error).message).toBe(`Could not reach http://gateway.test/x: ${words} (${cause.message})`);
      expect(calls).toHaveLength(1);
    }
  });

  it("a name tried at each of its addresses reports each address's refusal once", async () => {
    const both = Object.assign(
      new AggregateError([
        withCode("connect ECONNREFUSED ::1:8080", "ECONNREFUSED"),
        withCode("connect ECONNREFUSED 127.0.0.1:8080", "ECONNREFUSED"),
      ]),
      { code: "ECONNREFUSED" },
    );
    const { send } = scriptedFetch([fetchFailed(both)]);
    const failure = await transport(send)
      .request("POST", "/x", "{}", { idempotent: false })
      .catch((error: unknown) => error);
    expect((failure as Error).message).toBe(
      "Could not reach http://gateway.test/x: connection refused (connect ECONNREFUSED ::1:8080; connect ECONNREFUSED 127.0.0.1:8080)",
    );
  });
});
