import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../shared/client/index.js";
import { Backoff, BACKOFF_MAX_MS, isRetryable, retrying } from "./backoff.js";

/** A refusal as the node plane throws it. */
function refusal(code: string, retryAfterSeconds?: number): ApiError {
  return new ApiError({ code, message: code, status: 503, retryAfterSeconds });
}

describe("Backoff", () => {
  it("doubles from 100 ms to a 10 s cap, each delay between half and all of its step", () => {
    const low = new Backoff(() => 0);
    const high = new Backoff(() => 1);
    const lows = Array.from({ length: 10 }, () => low.next());
    const highs = Array.from({ length: 10 }, () => high.next());
    expect(lows.slice(0, 4)).toEqual([50, 100, 200, 400]);
    expect(highs.slice(0, 4)).toEqual([100, 200, 400, 800]);
    expect(Math.max(...highs)).toBe(BACKOFF_MAX_MS);
    low.reset();
    expect(low.next()).toBe(50);
  });

  it("waits at least the Retry-After the service asked for", () => {
    expect(new Backoff(() => 0).next(refusal("service.unavailable", 3))).toBe(3000);
  });
});

describe("isRetryable", () => {
  it("retries what the catalogue calls retryable and anything without an envelope, nothing else", () => {
    for (const code of ["service.unavailable", "rate.limited", "internal.error"] as const)
      expect(isRetryable(refusal(code))).toBe(true);
    for (const code of ["job.stale_attempt", "auth.invalid_credentials", "request.invalid"] as const)
      expect(isRetryable(refusal(code))).toBe(false);
    expect(isRetryable(new TypeError("fetch failed"))).toBe(true);
  });

  it("retries a code it does not know (a newer service's), as an unexpected fault", () => {
    expect(isRetryable(refusal("something.new"))).toBe(true);
  });
});

describe("retrying", () => {
  const logger = pino({ level: "silent" });

  it("tries a retryable failure again until the call succeeds", async () => {
    let calls = 0;
    const result = await retrying(
      async () => {
        calls += 1;
        if (calls < 3) throw refusal("service.unavailable");
        return "ok";
      },
      { what: "test", logger, signal: new AbortController().signal },
    );
    expect({ result, calls }).toEqual({ result: "ok", calls: 3 });
  });

  it("throws a failure no retry can fix at once", async () => {
    let calls = 0;
    const call = async () => {
      calls += 1;
      throw refusal("job.stale_attempt");
    };
    await expect(retrying(call, { what: "test", logger, signal: new AbortController().signal })).rejects.toMatchObject({
      code: "job.stale_attempt",
    });
    expect(calls).toBe(1);
  });

  it("stops waiting when its signal aborts", async () => {
    const stop = new AbortController();
    const pending = retrying(() => Promise.reject(new TypeError("fetch failed")), {
      what: "test",
      logger,
      signal: stop.signal,
    });
    stop.abort();
    await expect(pending).rejects.toThrow();
  });
});
