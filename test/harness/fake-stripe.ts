import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBase62 } from "../../shared/runtime/index.js";

export interface StripeCall {
  method: string;
  path: string;
  authorization: string | undefined;
  form: URLSearchParams;
}

const SUBSCRIPTION_PATH = /^\/v1\/subscriptions\/([A-Za-z0-9_]+)$/;

/**
 * Stripe's API as billing uses it, on a local port, recording each call:
 * `POST /v1/checkout/sessions` and `POST /v1/subscriptions/{id}` (an update), answered as
 * Stripe would. With `refuseSubscriptionUpdates`, an update is refused as Stripe refuses
 * a bad request.
 */
export class FakeStripe {
  readonly calls: StripeCall[] = [];
  refuseSubscriptionUpdates = false;
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer(
      (request, response) =>
        void this.handle(request).then(({ status, body }) =>
          response
            .writeHead(status, { "content-type": "application/json", "request-id": `req_${randomBase62(14)}` })
            .end(JSON.stringify(body)),
        ),
    );
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(request: IncomingMessage): Promise<{ status: number; body: unknown }> {
    let text = "";
    for await (const chunk of request) text += String(chunk);
    const form = new URLSearchParams(text);
    const path = request.url ?? "";
    this.calls.push({ method: request.method ?? "", path, authorization: request.headers.authorization, form });
    const subscriptionId = SUBSCRIPTION_PATH.exec(path)?.[1];
    if (request.method === "POST" && path === "/v1/checkout/sessions") return this.checkoutSession(form);
    if (request.method === "POST" && subscriptionId !== undefined) return this.subscriptionUpdate(subscriptionId, form);
    return { status: 404, body: { error: { type: "invalid_request_error", message: "Unrecognized request URL" } } };
  }

  private checkoutSession(form: URLSearchParams) {
    const id = `cs_test_${randomBase62(24)}`;
    return {
      status: 200,
      body: {
        id,
        object: "checkout.session",
        mode: form.get("mode"),
        url: `https://checkout.stripe.test/c/pay/${id}`,
        expires_at: Math.floor(Date.now() / 1000) + 86_400,
        metadata: {
          app_id: form.get("metadata[app_id]"),
          business_id: form.get("metadata[business_id]"),
          plan_id: form.get("metadata[plan_id]"),
        },
        customer: null,
        subscription: null,
      },
    };
  }

  private subscriptionUpdate(id: string, form: URLSearchParams) {
    if (this.refuseSubscriptionUpdates)
      return {
        status: 400,
        body: { error: { type: "invalid_request_error", message: `No such subscription: '${id}'` } },
      };
    return {
      status: 200,
      body: {
        id,
        object: "subscription",
        status: "active",
        cancel_at_period_end: form.get("cancel_at_period_end") === "true",
        metadata: {},
      },
    };
  }
}
