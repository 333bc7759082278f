import type { FastifyBaseLogger } from "fastify";
import { KeySpendReply, type KeySpendCommand } from "../../../shared/contract/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { RequestTrace } from "../../../shared/tracing/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { Caller } from "./authenticator.js";

/** Billing answers from one KV read; a key list does not wait longer than this for it. */
const SPEND_TIMEOUT_MS = 1000;

/**
 * What billing charged each key of the caller's business this month, or null when billing
 * does not answer: a key list still answers then, without the spend.
 */
export async function keySpendThisMonth(
  gw: GatewayContext,
  caller: Caller,
  trace: RequestTrace,
  log: FastifyBaseLogger,
): Promise<KeySpendReply | null> {
  const command: KeySpendCommand = { caller: { app_id: caller.app_id, business_id: caller.business_id } };
  try {
    return await requestRpc(gw.nc, "creditKeySpend", command, {
      timeoutMs: SPEND_TIMEOUT_MS,
      trace,
    });
  } catch (error) {
    log.warn({ err: error }, "could not read the API keys' spend from billing; listing keys without it");
    return null;
  }
}
