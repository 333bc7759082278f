import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { billingWebhookPath, SANDBOX_SIGNATURE_HEADER } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { toAppError } from "../http/to-app-error.js";
import { checkoutPage, messagePage } from "./sandbox-page.js";

type SessionRequest = FastifyRequest<{ Params: { sessionId: string }; Body: unknown }>;

/** The session id is the page's credential: keep it out of referrers, caches and frames. */
function htmlReply(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .header("content-type", "text/html; charset=utf-8")
    .header("cache-control", "no-store")
    .header("referrer-policy", "no-referrer")
    .header("x-frame-options", "DENY")
    .header(
      "content-security-policy",
      "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    )
    .send(html);
}

function refusalPage(reply: FastifyReply, error: unknown, log: FastifyRequest["log"]): FastifyReply {
  const appError = toAppError(error);
  if (appError.code === "internal.error") log.error({ err: error }, "sandbox checkout failed");
  if (appError.code === "resource.not_found")
    return htmlReply(reply, 404, messagePage("Checkout not found", "This checkout link is not valid."));
  if (appError.code === "state.conflict") {
    return htmlReply(
      reply,
      409,
      messagePage(
        "Checkout closed",
        `This checkout is ${String(appError.details?.state ?? "closed")}. Start a new checkout from the application.`,
      ),
    );
  }
  return htmlReply(
    reply,
    appError.httpStatus,
    messagePage("Checkout unavailable", "The checkout could not be served right now; try again shortly."),
  );
}

/** `GET /sandbox/checkout/{session}`: the page with the plan, its price, Pay and Cancel. */
export function showSandboxCheckout(gw: GatewayContext) {
  return async (request: SessionRequest, reply: FastifyReply) => {
    try {
      const view = await requestRpc(
        gw.nc,
        "billingSandboxSessionGet",
        { session_id: request.params.sessionId },
        { trace: request.trace },
      );
      return htmlReply(reply, 200, checkoutPage(view));
    } catch (error) {
      return refusalPage(reply, error, request.log);
    }
  };
}

/**
 * The page's form post. Pay: billing marks the session paid and hands back its signed
 * event, which is posted to the sandbox webhook endpoint as a provider would; once that is
 * accepted, the browser goes to `success_url`. Cancel: straight to `cancel_url`.
 */
export function actOnSandboxCheckout(gw: GatewayContext, app: FastifyInstance) {
  return async (request: SessionRequest, reply: FastifyReply) => {
    const action = (request.body as Record<string, unknown> | undefined)?.action;
    try {
      if (action !== "pay" && action !== "cancel") throw new AppError("request.invalid", "Press Pay or Cancel.");
      const answer = await requestRpc(
        gw.nc,
        "billingSandboxSessionAct",
        { session_id: request.params.sessionId, action },
        { trace: request.trace },
      );
      if (answer.delivery) {
        const delivered = await app.inject({
          method: "POST",
          url: billingWebhookPath("sandbox"),
          payload: answer.delivery.body,
          headers: { "content-type": "application/json", [SANDBOX_SIGNATURE_HEADER]: answer.delivery.signature },
        });
        if (delivered.statusCode !== 200) {
          request.log.warn({ status: delivered.statusCode }, "sandbox webhook delivery was refused");
          const view = await requestRpc(
            gw.nc,
            "billingSandboxSessionGet",
            { session_id: request.params.sessionId },
            { trace: request.trace },
          ).catch(() => null);
          const notice =
            "The payment was taken but its confirmation did not get through. Press Pay again to resend it (you are not charged twice).";
          return htmlReply(reply, 502, view ? checkoutPage(view, notice) : messagePage("Checkout unavailable", notice));
        }
      }
      return reply
        .code(303)
        .header("cache-control", "no-store")
        .header("referrer-policy", "no-referrer")
        .redirect(answer.redirect_url, 303);
    } catch (error) {
      if (error instanceof AppError && error.code === "request.invalid")
        return htmlReply(reply, 400, messagePage("Checkout", error.message));
      return refusalPage(reply, error, request.log);
    }
  };
}
