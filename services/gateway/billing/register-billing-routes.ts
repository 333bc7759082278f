import type { FastifyInstance } from "fastify";
import { BILLING_WEBHOOK_ROUTE, RPC_ROUTES, SANDBOX_CHECKOUT_ROUTE } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { registerRpc, type Edge } from "../http/register-rpc.js";
import { registerForwarded } from "../rpc/forward.js";
import { createCheckout } from "./create-checkout.js";
import { receiveWebhook } from "./receive-webhook.js";
import { actOnSandboxCheckout, showSandboxCheckout } from "./sandbox-checkout.js";

/** Largest webhook body taken (Stripe's events are a few KiB; base64 of this still fits a NATS message). */
const WEBHOOK_MAX_BYTES = 256 * 1024;
const FORM_MAX_BYTES = 1024;

/**
 * Billing at the edge: its RPCs (forwarded to billing), the payment providers'
 * webhook endpoint (raw body, no X-App-ID) and the sandbox provider's checkout page.
 * The last two live in their own fastify context with their own body parsers.
 */
export function registerBillingRoutes(app: FastifyInstance, edge: Edge, gw: GatewayContext): void {
  for (const name of ["listPlans", "getSubscription", "cancelSubscription"] as const)
    registerForwarded(app, edge, gw, name);
  registerRpc(app, edge, RPC_ROUTES.createCheckout, createCheckout(gw));

  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Signatures cover the exact bytes: the body stays a Buffer.
    scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: WEBHOOK_MAX_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    scope.post<{ Params: { provider: string } }>(BILLING_WEBHOOK_ROUTE, receiveWebhook(gw, edge.natsUp));
  });

  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: FORM_MAX_BYTES },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    // The session id in the path is the page's credential: no per-request info log lines carrying it.
    const quiet = { logLevel: "warn" } as const;
    scope.get<{ Params: { sessionId: string } }>(
      SANDBOX_CHECKOUT_ROUTE,
      { ...quiet, exposeHeadRoute: false },
      showSandboxCheckout(gw),
    );
    scope.post<{ Params: { sessionId: string } }>(SANDBOX_CHECKOUT_ROUTE, quiet, actOnSandboxCheckout(gw, app));
  });
}
