import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { z } from "zod";
import { subjects } from "./names.js";
import { encodeJson } from "./rpc.js";

/** What one replica answers on `cjs.ping.<service>`. */
export const PingReply = z.object({
  /** The service name, as in the subject. */
  service: z.string(),
  /** Random per process instance, so a caller can count distinct replicas. */
  instance: z.string(),
});
export type PingReply = z.infer<typeof PingReply>;

/**
 * Answers the service's ping subject. No queue group: every replica answers, so a
 * `requestMany` on the subject gathers one reply per live replica.
 */
export function servePing(nc: NatsConnection, options: PingReply & { logger: Logger }): Subscription {
  const { service, instance, logger } = options;
  const reply = encodeJson({ service, instance } satisfies PingReply);
  return nc.subscribe(subjects.servicePing(service), {
    callback: (error, msg) => {
      if (error) {
        logger.error({ err: error, service }, "ping subscription failed");
        return;
      }
      msg.respond(reply);
    },
  });
}
