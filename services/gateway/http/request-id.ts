import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { acceptedRequestId } from "../../../shared/tracing/index.js";

/** Honours a caller's `X-Request-ID` when it is a sane token, else makes one. */
export function requestIdOf(req: IncomingMessage): string {
  return acceptedRequestId(req.headers["x-request-id"]) ?? randomUUID();
}
