import { Match, type Msg, type Subscription } from "@nats-io/transport-node";
import type { FastifyBaseLogger } from "fastify";
import {
  NODE_NATS_HEADERS,
  NODE_NATS_OPERATIONS,
  RPC_ROUTES,
  successMessage,
  type RpcRoute,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { queueGroups, subjects } from "../../../shared/nats/index.js";
import { randomBase62 } from "../../../shared/runtime/index.js";
import {
  acceptedRequestId,
  acceptedTraceparent,
  acceptedTracestate,
  natsSpanAttributes,
  type RequestTrace,
  SPAN_KIND,
  startSpan,
  traceLogFields,
  tracingOn,
  type TraceSpan,
} from "../../../shared/tracing/index.js";
import type { GatewayContext } from "../gateway-context.js";
import { type Edge, type RpcHandler, runRpc } from "../http/register-rpc.js";
import type { HandlerTable, NodePlaneName } from "../rpc/node-plane.js";
import { answer, decodeBody, type NatsAnswer, PendingReply } from "./nats-reply.js";
import { NatsUploads } from "./nats-upload.js";

/**
 * The origin of the artifact upload URLs handed out over NATS. The signature covers the
 * path and query only; an agent in NATS-direct mode sends the URL back over NATS.
 */
export const NODE_NATS_ORIGIN = "nats://gateway";

/** Before answering the calls still in flight (long polls) with `service.unavailable` at stop. */
const STOP_GRACE_MS = 2_000;

export interface NodeNatsDeps {
  gw: GatewayContext;
  edge: Edge;
  handlers: HandlerTable<NodePlaneName>;
}

export interface NodeNats {
  start(): void;
  stop(): Promise<void>;
}

function header(msg: Msg, name: string): string | undefined {
  const value = msg.headers?.get(name, Match.IgnoreCase);
  return value === undefined || value === "" ? undefined : value;
}

/** A node-plane message's trace, its span, and the log fields that name it. */
interface Received {
  trace: RequestTrace;
  span: TraceSpan | undefined;
  bindings: { request_id?: string; trace_id?: string };
}

/**
 * The NATS-direct node plane: every replica answers the node-plane subjects in the
 * gateway's queue group with the same handlers, credential checks and schemas as the
 * HTTP routes, and the same envelope as the HTTP body.
 */
export function buildNodeNats({ gw, edge, handlers }: NodeNatsDeps): NodeNats {
  const log = gw.logger.child({ transport: "nats" });
  const instanceId = randomBase62(12);
  const uploads = new NatsUploads({
    gw,
    natsUp: edge.natsUp,
    instanceId,
    log,
    idleMs: gw.config.CJS_NATS_UPLOAD_IDLE_SECONDS * 1000,
  });
  const subscriptions: Subscription[] = [];
  const inFlight = new Map<PendingReply, Promise<void>>();

  /** The message's trace as the agent sent it (its headers are HTTP's), with a server span of its own while tracing is on. */
  function receive(msg: Msg, subject: string): Received {
    const requestId = acceptedRequestId(header(msg, NODE_NATS_HEADERS.requestId)) ?? randomBase62(16);
    const received = acceptedTraceparent(header(msg, NODE_NATS_HEADERS.traceparent));
    const tracestate =
      received === undefined ? undefined : acceptedTracestate(header(msg, NODE_NATS_HEADERS.tracestate));
    const span = tracingOn()
      ? startSpan(
          subject,
          SPAN_KIND.server,
          { traceparent: received, tracestate },
          natsSpanAttributes(subject, requestId),
        )
      : undefined;
    const trace: RequestTrace = span
      ? { requestId, traceparent: span.traceparent, tracestate: span.tracestate }
      : { requestId, traceparent: received, tracestate };
    return { trace, span, bindings: traceLogFields(trace) };
  }

  function serve(
    subject: string,
    operation: string,
    work: (msg: Msg, received: Received, reply: PendingReply) => Promise<NatsAnswer>,
  ): void {
    subscriptions.push(
      gw.nc.subscribe(subject, {
        queue: queueGroups.gateway,
        callback: (error, msg) => {
          if (error) return void log.error({ err: error, subject }, "node-plane subscription failed");
          const received = receive(msg, subject);
          const reply = new PendingReply(msg, log.child({ ...received.bindings, subject }), operation);
          const done = answer(reply, () => work(msg, received, reply)).finally(() => {
            inFlight.delete(reply);
            received.span?.end();
          });
          inFlight.set(reply, done);
        },
      }),
    );
  }

  return {
    start() {
      for (const [operation, name] of Object.entries(NODE_NATS_OPERATIONS)) {
        const route: RpcRoute = RPC_ROUTES[name];
        const handler = handlers[name] as unknown as RpcHandler<RpcRoute>;
        serve(subjects.nodePlane(operation), operation, async (msg, { trace, bindings }, reply) => {
          const payload = await runRpc(edge, route, handler, {
            appId: header(msg, NODE_NATS_HEADERS.appId),
            credentials: {
              authorization: header(msg, NODE_NATS_HEADERS.authorization),
              apiKey: header(msg, NODE_NATS_HEADERS.apiKey),
            },
            body: decodeBody(msg.data, gw.config.CJS_MAX_BODY_BYTES),
            responseHeaders: reply,
            ip: "nats",
            origin: NODE_NATS_ORIGIN,
            trace,
            log: log.child({ ...bindings, operation }) as FastifyBaseLogger,
          });
          return { message: successMessage(route, payload), payload };
        });
      }
      serve(subjects.nodePlaneUploadOpen(), "artifact.open", async (msg) => uploads.start(msg));
    },

    async stop() {
      await Promise.all(subscriptions.map((subscription) => subscription.drain().catch(() => undefined)));
      uploads.abortAll();
      // Long polls would otherwise hold their agents until the poll's own end: they ask another replica now.
      const settled = Promise.all(inFlight.values());
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))]);
      clearTimeout(timer);
      for (const reply of inFlight.keys()) {
        reply.fail(
          new AppError("service.unavailable", "The gateway is stopping; ask again.", { retryAfterSeconds: 1 }),
        );
      }
    },
  };
}
