import { JetStreamApiError } from "@nats-io/jetstream";
import { errors as natsErrors } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { AppError } from "../errors/index.js";
import { asServiceError, isNatsUnavailable } from "./unavailable.js";

describe("what a caller sees of a NATS failure", () => {
  it("a JetStream API 503 (a cluster electing a leader) is a retryable service.unavailable, not an internal error", () => {
    const electing = new JetStreamApiError({
      code: 503,
      err_code: 10008,
      description: "JetStream system temporarily unavailable",
    });
    expect(isNatsUnavailable(electing)).toBe(true);
    expect(asServiceError(electing)).toMatchObject({ code: "service.unavailable", retryAfterSeconds: 1 });
  });

  it("a timeout is service.unavailable; a refusal that says the request was wrong is not", () => {
    expect(asServiceError(new natsErrors.TimeoutError()).code).toBe("service.unavailable");
    const wrongSequence = new JetStreamApiError({ code: 400, err_code: 10071, description: "wrong last sequence: 3" });
    expect(isNatsUnavailable(wrongSequence)).toBe(false);
    expect(asServiceError(wrongSequence).code).toBe("internal.error");
  });

  it("an AppError passes through unchanged", () => {
    const refused = new AppError("queue.full", "full");
    expect(asServiceError(refused)).toBe(refused);
  });
});
