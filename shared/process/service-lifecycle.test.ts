import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { serviceLifecycle } from "./service-lifecycle.js";

/** Just what the lifecycle uses of a connection: subscriptions (recorded, with their drains) and a flush. */
function recordingConnection(events: string[]) {
  const nc = {
    subscribe(subject: string) {
      events.push(`subscribe ${subject}`);
      return { drain: async () => void events.push(`drain ${subject}`) } as unknown as Subscription;
    },
    flush: async () => void events.push("flush"),
  };
  return nc as unknown as NatsConnection;
}

const logger = pino({ level: "silent" });

describe("serviceLifecycle", () => {
  it("is ready once started and the server knows its subscriptions, and its ping comes with them", async () => {
    const events: string[] = [];
    const service = serviceLifecycle({
      name: "log-relay",
      nc: recordingConnection(events),
      logger,
      queue: "q",
      start: async (run) => {
        events.push("start");
        run.serve("logsSummary", async () => ({ dropped_lines: 0 }));
      },
    });
    expect(service.ready()).toBe(false);
    await service.start();
    expect(service.ready()).toBe(true);
    expect(events).toEqual(["start", "subscribe cjs.logrelay.logs.summary", "subscribe cjs.ping.log-relay", "flush"]);
  });

  it("is not ready from the moment it begins to stop; drains where the service asks, once, and a second stop waits for the first", async () => {
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const service = serviceLifecycle({
      name: "webhooks",
      nc: recordingConnection(events),
      logger,
      queue: "q",
      ping: false,
      start: async (run) => run.serve("webhookList", async () => ({ items: [], next_cursor: null })),
      stop: async (drain) => {
        events.push("stop parts");
        await drain();
        await held;
        events.push("stopped parts");
      },
    });
    await service.start();
    const first = service.stop();
    const second = service.stop();
    expect(service.ready()).toBe(false);
    release();
    await second;
    expect(events.slice(2)).toEqual(["stop parts", "drain cjs.webhooks.list", "stopped parts"]);
    await first;
  });
});
