import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** One POST a receiver got. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/** Decides the status code of the `index`-th request (from 0); may wait (a hanging receiver). */
export type Responder = (received: ReceivedDelivery, index: number) => number | Promise<number>;

/** A webhook receiver on loopback, as a user's endpoint: it keeps every POST, newest last, and answers as `respond` says. */
export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  respond: Responder;
  close(): Promise<void>;
}

export async function startWebhookReceiver(respond: Responder = () => 200): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = { url: "", received: [], respond, close: async () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const received = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      const index = receiver.received.push(received) - 1;
      void Promise.resolve(receiver.respond(received, index)).then((status) => {
        if (!res.destroyed) res.writeHead(status).end();
      });
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
