import { describe, expect, it } from "vitest";
import { ApiError } from "./api-error.js";
import { readEnvelope, refusalOf } from "./envelope.js";

function thrownBy(read: () => unknown): ApiError {
  try {
    read();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected the read to throw");
}

describe("readEnvelope", () => {
  it("answers the payload of a success envelope, over HTTP (2xx) and over NATS (no status)", () => {
    const body = { status: "SUCCESS", message: "ok", payload: { job_id: "job_1" } };
    expect(readEnvelope(body, { status: 200 })).toEqual({ job_id: "job_1" });
    expect(readEnvelope(body, {})).toEqual({ job_id: "job_1" });
  });

  it("throws the envelope's code, message and details with Retry-After and the request id", () => {
    const error = thrownBy(() =>
      readEnvelope(
        { status: "ERROR", code: "queue.full", message: "the queue is full", details: { limit: 3 } },
        { status: 503, retryAfter: "2", requestId: "req-1" },
      ),
    );
    expect(error).toMatchObject({
      code: "queue.full",
      message: "the queue is full",
      status: 503,
      details: { limit: 3 },
      requestId: "req-1",
      retryAfterSeconds: 2,
    });
  });

  it("keeps a Retry-After of 0 and drops one that is no number", () => {
    const refused = { status: "ERROR", code: "rate.limited", message: "slow down" };
    expect(refusalOf(refused, { status: 429, retryAfter: "0" }).retryAfterSeconds).toBe(0);
    expect(refusalOf(refused, { status: 429, retryAfter: "soon" }).retryAfterSeconds).toBeUndefined();
    expect(refusalOf(refused, { status: 429, retryAfter: null }).retryAfterSeconds).toBeUndefined();
  });

  it("passes a code this build does not know through as it is", () => {
    expect(refusalOf({ status: "ERROR", code: "something.new", message: "new" }, { status: 409 }).code).toBe(
      "something.new",
    );
  });

  it("reads an answer that is no envelope as request.invalid for a 4xx and internal.error otherwise", () => {
    expect(refusalOf("<html>", { status: 413 })).toMatchObject({ code: "request.invalid", message: "HTTP 413" });
    expect(refusalOf(undefined, { status: 502 })).toMatchObject({ code: "internal.error", message: "HTTP 502" });
    expect(thrownBy(() => readEnvelope({ payload: {} }, { status: 200 }))).toMatchObject({ code: "internal.error" });
  });

  it("gives a NATS refusal the HTTP status its code stands for", () => {
    expect(refusalOf({ status: "ERROR", code: "permission.denied", message: "no" }, {}).status).toBe(403);
    expect(refusalOf(undefined, {})).toMatchObject({
      code: "internal.error",
      status: 500,
      message: "The gateway's answer was not an envelope.",
    });
  });
});
