import { describe, expect, it } from "vitest";
import {
  assertSupportedServer,
  isSupportedServerVersion,
  NATS_SERVER_MINIMUM,
  NATS_SERVER_PINNED,
  parseServerVersion,
  UnsupportedServerError,
} from "./server-version.js";

describe("nats-server versions", () => {
  it("reads the version from what a server or binary reports", () => {
    expect(parseServerVersion("nats-server: v2.15.2")).toEqual([2, 15, 2]);
    expect(parseServerVersion("2.12.0-RC.1")).toEqual([2, 12, 0]);
    expect(parseServerVersion("unknown")).toBeUndefined();
  });

  it("refuses Debian's 2.9.10 and anything before the minimum, and takes the minimum, the pinned and later releases", () => {
    expect(isSupportedServerVersion("2.9.10")).toBe(false);
    expect(isSupportedServerVersion("2.9.25")).toBe(false);
    expect(isSupportedServerVersion("2.10.29")).toBe(false);
    expect(isSupportedServerVersion("2.11.9")).toBe(false);
    expect(isSupportedServerVersion("1.99.99")).toBe(false);
    expect(isSupportedServerVersion(NATS_SERVER_MINIMUM)).toBe(true);
    expect(isSupportedServerVersion(NATS_SERVER_PINNED)).toBe(true);
    expect(isSupportedServerVersion("2.15.10")).toBe(true);
    expect(isSupportedServerVersion("3.0.0")).toBe(true);
  });

  it("names the found and the required versions when it refuses", () => {
    expect(() => assertSupportedServer("2.9.10", "nats://db:4222")).toThrow(UnsupportedServerError);
    expect(() => assertSupportedServer("2.9.10", "nats://db:4222")).toThrow(
      /2\.9\.10 \(nats:\/\/db:4222\).*needs nats-server 2\.12\.0 or newer/,
    );
    expect(() => assertSupportedServer(undefined, "nats://db:4222")).toThrow(/of unknown version/);
    expect(() => assertSupportedServer(NATS_SERVER_PINNED, "nats://db:4222")).not.toThrow();
  });
});
