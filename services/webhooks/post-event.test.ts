import { afterEach, describe, expect, it } from "vitest";
import { startWebhookReceiver, type WebhookReceiver } from "../../test/harness/webhook-receiver.js";
import { postEvent } from "./post-event.js";
import { guardedLookup } from "./url-policy.js";

const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

/** A receiver on loopback that answers `status`, or never when null; `literal` is its URL by address, `url` by the name `localhost`. */
async function receiver(status: number | null) {
  const started = await startWebhookReceiver(() => (status === null ? new Promise<number>(() => undefined) : status));
  receivers.push(started);
  return { url: started.url.replace("127.0.0.1", "localhost"), literal: started.url, got: started.received };
}

const post = (url: string, allowPrivate: boolean, timeoutMs = 5_000) =>
  postEvent({ url, body: '{"id":"evt_1"}', headers: { "cjs-event-id": "evt_1" }, timeoutMs, allowPrivate }, Date.now);

describe("postEvent", () => {
  it("answers the receiver's status code and sends the body and headers as given", async () => {
    const target = await receiver(204);
    const attempt = await post(target.literal, true);
    expect(attempt).toMatchObject({ status_code: 204, error: null });
    expect(target.got[0]).toMatchObject({
      body: '{"id":"evt_1"}',
      headers: {
        "cjs-event-id": "evt_1",
        "content-type": "application/json",
        "user-agent": expect.stringContaining("compute-job-service"),
      },
    });
  });

  it("refuses a private address, by name or literal, at the connection, when not allowed: nothing is sent", async () => {
    const target = await receiver(200);
    expect(await post(target.url, false)).toMatchObject({
      status_code: null,
      error: "the host resolves to a private address",
    });
    expect(await post(target.literal, false)).toMatchObject({
      status_code: null,
      error: "the URL is a private address",
    });
    expect(target.got).toHaveLength(0);
  });

  it("a receiver that does not answer in time is a failed try with no status code", async () => {
    const target = await receiver(null);
    expect(await post(target.literal, true, 200)).toMatchObject({
      status_code: null,
      error: "no answer within 200 ms",
    });
  });
});

describe("guardedLookup", () => {
  it("hands the HTTP client only addresses it may connect to", async () => {
    const lookup = (allow: boolean) =>
      new Promise<{ error: NodeJS.ErrnoException | null; address: string }>((resolve) =>
        guardedLookup(allow)("localhost", {}, (error, address) => resolve({ error, address: String(address) })),
      );
    expect((await lookup(false)).error?.code).toBe("EPRIVATEADDRESS");
    expect((await lookup(true)).address).toMatch(/^(127\.0\.0\.1|::1)$/);
  });
});
