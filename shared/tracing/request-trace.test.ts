import { describe, expect, it } from "vitest";
import { BaseConfig } from "../runtime/index.js";
import { acceptedRequestId, acceptedTraceparent, acceptedTracestate, traceIdOf } from "./request-trace.js";
import { tracesUrl } from "./start-tracing.js";

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("acceptedTraceparent", () => {
  it("keeps a valid W3C traceparent, without the spaces the format tolerates at its ends", () => {
    expect(acceptedTraceparent(TRACEPARENT)).toBe(TRACEPARENT);
    expect(acceptedTraceparent(` ${TRACEPARENT} `)).toBe(TRACEPARENT);
  });

  it.each([
    ["an all-zero trace id", `00-${"0".repeat(32)}-00f067aa0ba902b7-01`],
    ["an all-zero parent id", `00-4bf92f3577b34da6a3ce929d0e0e4736-${"0".repeat(16)}-01`],
    ["version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],
    ["upper-case hex", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"],
    ["extra fields on version 00", `${TRACEPARENT}-extra`],
    ["a short trace id", "00-4bf92f35-00f067aa0ba902b7-01"],
  ])("refuses %s", (_what, value) => {
    expect(acceptedTraceparent(value)).toBeUndefined();
  });

  it("refuses what is not a string (a repeated header)", () => {
    expect(acceptedTraceparent([TRACEPARENT, TRACEPARENT])).toBeUndefined();
    expect(acceptedTraceparent(undefined)).toBeUndefined();
  });

  it("reads the trace id", () => {
    expect(traceIdOf(TRACEPARENT)).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });
});

describe("acceptedRequestId and acceptedTracestate", () => {
  it("accept a token of up to 128 safe characters, and nothing else", () => {
    expect(acceptedRequestId("req-1.a_b:c")).toBe("req-1.a_b:c");
    expect(acceptedRequestId("a".repeat(128))).toBe("a".repeat(128));
    expect(acceptedRequestId("a".repeat(129))).toBeUndefined();
    expect(acceptedRequestId("has space")).toBeUndefined();
    expect(acceptedRequestId("")).toBeUndefined();
  });

  it("keep a tracestate within the W3C size only", () => {
    expect(acceptedTracestate("vendor=value")).toBe("vendor=value");
    expect(acceptedTracestate("x".repeat(8_193))).toBeUndefined();
  });
});

describe("tracesUrl", () => {
  const url = (env: Record<string, string>) => tracesUrl(BaseConfig.parse(env));

  it("is off without an endpoint, or with the SDK disabled", () => {
    expect(url({})).toBeUndefined();
    expect(url({ OTEL_EXPORTER_OTLP_ENDPOINT: "" })).toBeUndefined();
    expect(url({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" })).toBeUndefined();
  });

  it("posts to /v1/traces under the general endpoint, or to the traces endpoint as given", () => {
    expect(url({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe("http://collector:4318/v1/traces");
    expect(url({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector/otlp/" })).toBe("https://collector/otlp/v1/traces");
    expect(
      url({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:4318/custom" }),
    ).toBe("http://b:4318/custom");
  });

  it("an endpoint that is not an http(s) URL is a configuration error naming the variable", () => {
    const result = BaseConfig.safeParse({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "collector:4318" });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join("."))).toEqual(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]);
  });
});
