import { describe, expect, it } from "vitest";
import { ComputeJobsClient } from "./client.js";

/**
 * The Idempotency-Key the client sends on submits and retries, against a scripted `fetch`
 * (the service's side is tested in test/integration/idempotency.test.ts).
 */
type Scripted = { status: number; code?: string; payload?: unknown };

function scriptedFetch(script: Scripted[]) {
  const keys: Array<string | undefined> = [];
  const send = (async (_url: string, init: RequestInit) => {
    keys.push((init.headers as Record<string, string>)["idempotency-key"]);
    const next = script[keys.length - 1];
    if (next === undefined) throw new Error("the script ran out");
    const body =
      next.status < 300
        ? { status: "SUCCESS", message: "ok", payload: next.payload ?? {} }
        : { status: "ERROR", code: next.code, message: "refused" };
    return new Response(JSON.stringify(body), {
      status: next.status,
      headers: { "content-type": "application/json", "retry-after": "0" },
    });
  }) as unknown as typeof fetch;
  return { send, keys };
}

function client(send: typeof fetch) {
  return new ComputeJobsClient({
    baseUrl: "http://gateway.test",
    appId: "app",
    credentials: { apiKey: "k" },
    fetch: send,
    retry: { baseDelayMs: 1, maxRetries: 3 },
  });
}

const QUEUED = { job_id: "job_0VbeygdjkkWnwRC9cwe1", state: "queued", created_at: "2026-11-22T01:08:54.919Z" };
const UNAVAILABLE = { status: 503, code: "service.unavailable" };

describe("Idempotency-Key", () => {
  it("a submit sends a random key, the same on each of its retries after a 503, and a new one on the next submit", async () => {
    const { send, keys } = scriptedFetch([
      UNAVAILABLE,
      { status: 200, payload: QUEUED },
      { status: 200, payload: QUEUED },
    ]);
    const jobs = client(send).jobs;
    expect(await jobs.submit({ type: "shell", command: ["true"] })).toEqual(QUEUED);
    await jobs.submit({ type: "shell", command: ["true"] });
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it("a retry sends the caller's own key when given, on each of its retries", async () => {
    const { send, keys } = scriptedFetch([UNAVAILABLE, { status: 200, payload: { job: {} } }]);
    await client(send).jobs.retry(QUEUED.job_id, { idempotencyKey: "my-retry-1" });
    expect(keys).toEqual(["my-retry-1", "my-retry-1"]);
  });

  it("other operations send no key, and a 503 of one that must not run twice is not retried", async () => {
    const { send, keys } = scriptedFetch([UNAVAILABLE]);
    await expect(client(send).jobs.cancel(QUEUED.job_id, { idempotencyKey: "ignored" })).rejects.toMatchObject({
      code: "service.unavailable",
    });
    expect(keys).toEqual([undefined]);
  });
});
