import { headers, type Msg } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { NODE_NATS_HEADERS } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { decodeJson, encodeJson } from "../../../shared/nats/index.js";
import { errorBody, retryAfterOf, successBody } from "../http/envelope.js";
import { toAppError } from "../http/to-app-error.js";
import { nodeNatsMessages } from "./node-nats-metrics.js";

/** What a served message answers on success: the envelope's message and payload. */
export interface NatsAnswer {
  message: string;
  payload: unknown;
}

/**
 * The answer to one request message, sent at most once: the work's own answer, or an
 * earlier one when the gateway stops before the work is done.
 */
export class PendingReply {
  private sent = false;
  /** Headers set while the work ran (the rate-limit headers of a user's call), sent with the answer. */
  private readonly answerHeaders = headers();

  constructor(
    private readonly msg: Msg,
    private readonly log: Logger,
    /** Names the message in the metrics (`poll`, `artifact.chunk`, …). */
    private readonly operation: string,
  ) {}

  get done(): boolean {
    return this.sent;
  }

  header(name: string, value: string | number): void {
    this.answerHeaders.set(name, String(value));
  }

  succeed(answer: NatsAnswer): void {
    if (!this.sent) nodeNatsMessages.inc({ operation: this.operation, outcome: "ok" });
    this.send(successBody(answer.message, answer.payload), this.answerHeaders);
  }

  /** The error envelope, with `Retry-After` when a retry may help, as HTTP sends it. */
  fail(error: unknown): void {
    if (this.sent) return;
    const appError = toAppError(error);
    nodeNatsMessages.inc({ operation: this.operation, outcome: appError.code });
    if (appError.code === "internal.error") this.log.error({ err: error }, "node-plane message failed");
    else this.log.info({ code: appError.code }, "node-plane message refused");
    const retryAfter = retryAfterOf(appError);
    if (retryAfter !== undefined) this.answerHeaders.set(NODE_NATS_HEADERS.retryAfter, retryAfter);
    this.send(errorBody(appError), this.answerHeaders);
  }

  private send(body: unknown, replyHeaders: ReturnType<typeof headers>): void {
    if (this.sent) return;
    this.sent = true;
    // A message without a reply subject (a plain publish) has nobody to answer.
    if (!this.msg.reply) return;
    try {
      this.msg.respond(encodeJson(body), { headers: replyHeaders });
    } catch (error) {
      this.log.warn({ err: error }, "could not answer a node-plane message");
    }
  }
}

/** Runs `work` for a message and answers with the envelope; never throws. */
export async function answer(reply: PendingReply, work: () => Promise<NatsAnswer>): Promise<void> {
  try {
    reply.succeed(await work());
  } catch (error) {
    reply.fail(error);
  }
}

/** A message's JSON body: none is `undefined` (read as `{}`, as an empty HTTP body is); a bad one is refused. */
export function decodeBody(data: Uint8Array, maxBytes: number): unknown {
  if (data.length > maxBytes) throw new AppError("request.too_large", "The body is larger than this service accepts.");
  if (data.length === 0) return undefined;
  try {
    return decodeJson(data);
  } catch {
    throw new AppError("request.malformed_json", "The body is not valid JSON.");
  }
}
