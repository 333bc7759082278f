import { describe, expect, it } from "vitest";
import { AppError } from "./app-error.js";

describe("AppError", () => {
  it("survives toData and fromData with code, message, details and retry hint intact", () => {
    const original = new AppError("state.conflict", "Job already finished", {
      details: { state: "succeeded" },
      retryAfterSeconds: 3,
    });

    const rebuilt = AppError.fromData(JSON.parse(JSON.stringify(original.toData())));

    expect(rebuilt).toBeInstanceOf(AppError);
    expect(rebuilt.code).toBe("state.conflict");
    expect(rebuilt.message).toBe("Job already finished");
    expect(rebuilt.details).toEqual({ state: "succeeded" });
    expect(rebuilt.retryAfterSeconds).toBe(3);
    expect(rebuilt.httpStatus).toBe(409);
  });

  it("serialises without optional fields it does not have", () => {
    expect(new AppError("resource.not_found", "No such job").toData()).toEqual({
      code: "resource.not_found",
      message: "No such job",
    });
  });

  it("uses the catalogue summary when no message is given", () => {
    expect(new AppError("rate.limited").message).toBe("Too many requests; wait `Retry-After` seconds.");
  });

  it("rebuilds an unknown code as internal.error, without its message or details", () => {
    const rebuilt = AppError.fromData({ code: "job.exploded", message: "secret internals", details: { stack: "..." } });
    expect(rebuilt.code).toBe("internal.error");
    expect(rebuilt.message).not.toContain("secret");
    expect(rebuilt.details).toBeUndefined();
    expect(rebuilt.httpStatus).toBe(500);
  });

  it("rebuilds data that is not an error object as internal.error", () => {
    for (const data of [null, undefined, "oops", 42, {}, { code: "state.conflict" }]) {
      expect(AppError.fromData(data).code, JSON.stringify(data)).toBe("internal.error");
    }
  });
});
