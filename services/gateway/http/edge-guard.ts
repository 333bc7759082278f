import type { Server, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from "fastify";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayConfig } from "../config.js";
import { answerOnSocket } from "./client-error.js";
import { edgeRefusals } from "./http-metrics.js";

/** How often Node looks for connections past their headers timeout (its default, 30 s, would let a slow client stay that much longer). */
const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

type EdgeSettings = Pick<
  GatewayConfig,
  | "CJS_HTTP_HEADERS_TIMEOUT_MS"
  | "CJS_HTTP_BODY_TIMEOUT_MS"
  | "CJS_HTTP_BODY_MIN_BYTES_PER_SECOND"
  | "CJS_HTTP_IDLE_TIMEOUT_MS"
  | "CJS_HTTP_KEEP_ALIVE_TIMEOUT_MS"
  | "CJS_HTTP_MAX_CONNECTIONS_PER_IP"
>;

/**
 * The HTTP server's own timeouts: the request line and headers must arrive within the
 * headers timeout (408), a connection with no byte in either direction for the idle
 * timeout is closed, and so is a kept-alive connection idle between requests for the
 * keep-alive timeout. Node's request timeout stays off: it would also end a large
 * artifact upload; `guardBodies` times bodies instead.
 */
export function edgeServerOptions(
  config: Readonly<EdgeSettings>,
): Pick<FastifyServerOptions, "connectionTimeout" | "keepAliveTimeout" | "requestTimeout"> & { http: ServerOptions } {
  return {
    connectionTimeout: config.CJS_HTTP_IDLE_TIMEOUT_MS,
    keepAliveTimeout: config.CJS_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: 0,
    http: {
      headersTimeout: config.CJS_HTTP_HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
    },
  };
}

function slowBody(): AppError {
  return new AppError("request.timeout", "The request body did not arrive in time; send it again, faster.", {
    retryAfterSeconds: 1,
  });
}

/**
 * Times every request body, before any credential is read: it has the body timeout, plus
 * one second for each `CJS_HTTP_BODY_MIN_BYTES_PER_SECOND` bytes received, to arrive in
 * full (the rule of Apache's mod_reqtimeout). A client that trickles a body is answered 408
 * `request.timeout` and its connection closed, so it holds a descriptor for seconds, not
 * for as long as it likes; an upload that keeps that rate may take as long as it needs.
 * A body still arriving after its request was answered (an upload refused by its
 * signature) is held to the same rule, and cut without a second answer.
 */
export function guardBodies(app: FastifyInstance, config: Readonly<EdgeSettings>, logger: FastifyBaseLogger): void {
  const timeoutMs = config.CJS_HTTP_BODY_TIMEOUT_MS;
  const bytesPerSecond = config.CJS_HTTP_BODY_MIN_BYTES_PER_SECOND;
  app.addHook("onRequest", (request, reply, done) => {
    const message = request.raw;
    const socket = message.socket;
    // An injected request (`app.inject`) has a stand-in socket that counts no bytes and cannot be cut: nothing to guard.
    if (message.complete || !socket || typeof socket.bytesRead !== "number") return done();
    const startedAt = Date.now();
    const bytesAtStart = socket.bytesRead;
    let timer: NodeJS.Timeout | undefined;
    // A kept-alive socket carries many requests: each one's listener goes with its body, or they pile up on it.
    const stop = () => {
      clearTimeout(timer);
      message.off("end", stop);
      socket.off("close", stop);
    };
    const check = () => {
      if (message.complete || socket.destroyed) return stop();
      const allowedMs = timeoutMs + ((socket.bytesRead - bytesAtStart) / bytesPerSecond) * 1000;
      const leftMs = startedAt + allowedMs - Date.now();
      if (leftMs > 0) {
        timer = setTimeout(check, leftMs);
        return;
      }
      edgeRefusals.inc({ reason: "slow_body" });
      logger.info({ route: request.routeOptions.url, method: request.method }, "request refused: body too slow");
      if (reply.raw.headersSent) socket.destroy();
      else answerOnSocket(socket, slowBody());
    };
    timer = setTimeout(check, timeoutMs);
    message.once("end", stop);
    socket.once("close", stop);
    done();
  });
}

function tooManyConnections(max: number): AppError {
  return new AppError(
    "rate.connections_exceeded",
    `This client address has ${max} connections open to this gateway already; close some or retry later.`,
    { retryAfterSeconds: 1, details: { limit: max } },
  );
}

/**
 * At most `CJS_HTTP_MAX_CONNECTIONS_PER_IP` open connections per client address, counted
 * on the socket before a byte is read (0: no limit). One more is answered 429
 * `rate.connections_exceeded` and closed. The address is the socket's peer: behind a
 * proxy every connection is the proxy's, so there the proxy keeps this budget instead.
 */
export function limitConnectionsPerAddress(server: Server, max: number, logger: FastifyBaseLogger): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  // The HTTP server's own listeners run only for an admitted connection: a refused one never reaches the parser.
  const admitted = server.listeners("connection") as Array<(socket: Socket) => void>;
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      edgeRefusals.inc({ reason: "connections_per_ip" });
      logger.info({ limit: max }, "connection refused: too many from one address");
      answerOnSocket(socket, tooManyConnections(max));
      return;
    }
    open.set(address, count);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
    for (const listener of admitted) listener.call(server, socket);
  });
}
