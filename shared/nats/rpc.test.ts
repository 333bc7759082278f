import { headers } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { headerWireBytes } from "./rpc.js";

describe("headerWireBytes", () => {
  it("is what nats.js puts on the wire for the headers", () => {
    const sent = headers();
    sent.set("Cjs-Request-Id", "req_0123456789");
    sent.set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    sent.append("X-Many", "one");
    sent.append("X-Many", "twø");
    const encoded = (sent as unknown as { encode(): Uint8Array }).encode();
    expect(headerWireBytes(sent)).toBe(encoded.length);
  });

  it("is 0 without headers", () => {
    expect(headerWireBytes(undefined)).toBe(0);
  });
});
