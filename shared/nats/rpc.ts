import { type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { z } from "zod";
import { AppError, type ErrorData, isAppError } from "../errors/index.js";
import { natsRequestSeconds, zodIssues } from "../runtime/index.js";
import { asServiceError } from "./unavailable.js";

/** What a service replies over NATS: the payload, or the error as data. */
type RpcReply = { ok: true; payload: unknown } | { ok: false; error: ErrorData };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export function decodeJson(data: Uint8Array): unknown {
  return JSON.parse(decoder.decode(data));
}

export interface ServeRpcOptions<Req extends z.ZodType> {
  subject: string;
  /** Queue group, so that one replica takes each request. */
  queue: string;
  request: Req;
  logger: Logger;
  handle: (request: z.infer<Req>) => Promise<unknown>;
}

/** Serves one request/reply subject: validates the request, runs the handler, replies with data or an error. */
export function serveRpc<Req extends z.ZodType>(nc: NatsConnection, options: ServeRpcOptions<Req>): Subscription {
  const { subject, queue, request, logger, handle } = options;
  return nc.subscribe(subject, {
    queue,
    callback: (subscriptionError, msg) => {
      if (subscriptionError) {
        logger.error({ err: subscriptionError, subject }, "rpc subscription failed");
        return;
      }
      void (async () => {
        let reply: RpcReply;
        try {
          const parsed = request.safeParse(decodeJson(msg.data));
          if (!parsed.success) {
            throw new AppError("request.invalid", "The request does not match the schema.", { details: { issues: zodIssues(parsed.error) } });
          }
          reply = { ok: true, payload: await handle(parsed.data) };
        } catch (error) {
          const failure = asServiceError(error);
          if (failure.code === "internal.error") logger.error({ err: error, subject }, "rpc handler failed");
          else if (!isAppError(error)) logger.warn({ err: error, subject }, "rpc handler could not reach NATS");
          reply = { ok: false, error: failure.toData() };
        }
        if (msg.reply) msg.respond(encodeJson(reply));
      })();
    },
  });
}

export interface RequestRpcOptions {
  timeoutMs?: number;
}

/**
 * Sends one request and returns the validated payload, or throws the AppError the service
 * answered with. No responder or no answer in time is `service.unavailable`.
 */
/**
 * Refuses a message larger than the NATS server's `max_payload` before it is sent or
 * stored: it is the caller's body that is too large to cross between the services or to
 * be kept (the body limit counts the body alone), so nothing is written and no retry helps.
 */
export function assertFitsMessage(nc: NatsConnection, data: Uint8Array, what = "request"): void {
  const maxBytes = nc.info?.max_payload;
  if (maxBytes === undefined || data.length <= maxBytes) return;
  throw new AppError("request.too_large", `The ${what} would be a ${data.length}-byte message, over the ${maxBytes}-byte message limit between the services. Send a smaller body.`, {
    details: { max_bytes: maxBytes },
  });
}

export async function requestRpc<Res extends z.ZodType>(
  nc: NatsConnection,
  subject: string,
  body: unknown,
  response: Res,
  { timeoutMs = 5_000 }: RequestRpcOptions = {},
): Promise<z.infer<Res>> {
  const data = encodeJson(body);
  assertFitsMessage(nc, data);
  const stopTimer = natsRequestSeconds.startTimer({ subject });
  let raw: unknown;
  try {
    const msg = await nc.request(subject, data, { timeout: timeoutMs });
    raw = decodeJson(msg.data);
    stopTimer({ outcome: "ok" });
  } catch (error) {
    stopTimer({ outcome: "unavailable" });
    // No responder, a timeout or a closed connection: the caller cannot tell which, and may retry.
    throw new AppError("service.unavailable", "A backing service did not answer; try again shortly.", { retryAfterSeconds: 1, cause: error });
  }
  const reply = raw as RpcReply;
  if (!reply.ok) throw AppError.fromData(reply.error);
  return response.parse(reply.payload);
}
