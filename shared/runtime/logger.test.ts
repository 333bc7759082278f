import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";

function capture() {
  const lines: string[] = [];
  return { lines, destination: { write: (line: string) => void lines.push(line) } };
}

describe("createLogger", () => {
  it("replaces secrets wherever they sit in a log object, and keeps the rest", () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: "test", level: "info", destination });
    logger.info(
      {
        password: "hunter2hunter2",
        user: { password: "p", key: "cjs_secret" },
        config: { CJS_STRIPE_SECRET_KEY: "sk_test_x", CJS_STRIPE_WEBHOOK_SECRET: "whsec_x", CJS_PORT: 8080 },
        billing: { secret: "s3cret" },
        req: {
          headers: {
            authorization: "Bearer t",
            "x-api-key": "cjs_k",
            "stripe-signature": "t=1,v1=ab",
            "cjs-sandbox-signature": "t=1,v1=cd",
          },
        },
        job_id: "job_1",
      },
      "something happened",
    );
    const line = lines.join("");
    for (const secret of [
      "hunter2hunter2",
      "cjs_secret",
      "sk_test_x",
      "whsec_x",
      "s3cret",
      "Bearer t",
      "cjs_k",
      "v1=ab",
      "v1=cd",
    ]) {
      expect(line).not.toContain(secret);
    }
    const logged = JSON.parse(line) as Record<string, unknown>;
    expect(logged).toMatchObject({
      service: "test",
      job_id: "job_1",
      config: { CJS_PORT: 8080, CJS_STRIPE_SECRET_KEY: "[redacted]" },
      msg: "something happened",
    });
  });

  it("blanks the value of credential query parameters wherever a URL sits in a line", () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: "test", level: "info", destination });
    logger.warn(
      { url: "/api/x/artifacts/a?expires=1&signature=c2lnbmF0dXJl&scope=prefix" },
      "upload to http://h/p?token=tok123&x=1 failed",
    );
    logger.error({ err: new Error("Failed to parse URL from http://h/p?api_key=cjs_abc") }, "failed");
    const text = lines.join("");
    for (const secret of ["c2lnbmF0dXJl", "tok123", "cjs_abc"]) expect(text).not.toContain(secret);
    expect(text).toContain("expires=1&signature=[redacted]&scope=prefix");
  });

  it("drops the raw request bytes an HTTP parser error carries", () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: "test", level: "trace", destination });
    const parseError = Object.assign(new Error("Parse Error: Invalid header token"), {
      code: "HPE_INVALID_HEADER_TOKEN",
      rawPacket: Buffer.from("GET /?signature=abc HTTP/1.1"),
    });
    logger.trace({ err: parseError }, "client error");
    const logged = JSON.parse(lines.join("")) as { err: Record<string, unknown> };
    expect(logged.err).toMatchObject({
      code: "HPE_INVALID_HEADER_TOKEN",
      message: "Parse Error: Invalid header token",
    });
    expect(logged.err).not.toHaveProperty("rawPacket");
  });
});
