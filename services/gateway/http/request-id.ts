import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/;

/** Honours a caller's `X-Request-ID` when it is a sane token, else makes one. */
export function requestIdOf(req: IncomingMessage): string {
  const header = req.headers["x-request-id"];
  return typeof header === "string" && ACCEPTED.test(header) ? header : randomUUID();
}
