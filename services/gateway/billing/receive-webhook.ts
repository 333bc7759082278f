import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../../shared/errors/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { sendSuccess } from "../http/envelope.js";

/** Headers never passed on: credentials have no business in a provider's delivery. */
const WITHHELD_HEADERS = new Set(["authorization", "proxy-authorization", "cookie", "x-api-key"]);
const PROVIDER = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * `POST /api/compute/billing/webhooks/{provider}`: a payment provider's event. Public (the
 * signature is the proof), no `X-App-ID`; the exact body bytes go to billing, which
 * verifies and applies it.
 */
export function receiveWebhook(gw: GatewayContext, natsUp: () => boolean) {
  return async (request: FastifyRequest<{ Params: { provider: string } }>, reply: FastifyReply) => {
    if (!natsUp())
      throw new AppError("service.unavailable", "The service is reconnecting to its message bus; try again shortly.", {
        retryAfterSeconds: 1,
      });
    const { provider } = request.params;
    if (!PROVIDER.test(provider)) throw new AppError("resource.not_found", "No such payment provider.");
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string" && !WITHHELD_HEADERS.has(name)) headers[name] = value;
    }
    const answer = await requestRpc(
      gw.nc,
      "billingWebhookReceive",
      { provider, body_base64: body.toString("base64"), headers },
      { trace: request.trace },
    );
    return sendSuccess(reply, answer.duplicate ? "Event already received" : "Event received", answer);
  };
}
