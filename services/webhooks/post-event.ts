import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import type { DeliveryAttempt } from "../../shared/contract/index.js";
import { guardedLookup, isPrivateAddress } from "./url-policy.js";

/** The User-Agent of every delivery. */
export const WEBHOOK_USER_AGENT = "compute-job-service-webhooks/1";

export interface Post {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
}

/**
 * POSTs one delivery and reports its answer's status code, or the error when there was
 * none (refused address, connection failure, timeout). The answer's body is read and
 * thrown away: nothing of it is kept. Never throws.
 */
export async function postEvent(post: Post, now: () => number): Promise<DeliveryAttempt> {
  const started = now();
  const at = new Date(started).toISOString();
  const done = (status_code: number | null, error: string | null): DeliveryAttempt => ({
    at,
    status_code,
    error,
    duration_ms: Math.max(0, now() - started),
  });
  let url: URL;
  try {
    url = new URL(post.url);
  } catch {
    return done(null, "invalid URL");
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  // A literal address is connected to without a lookup, so it is checked here.
  if (!post.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host))
    return done(null, "the URL is a private address");
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<DeliveryAttempt>((resolve) => {
    let settled = false;
    const finish = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      resolve(done(status, error));
    };
    const req = send(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(post.body)),
          "user-agent": WEBHOOK_USER_AGENT,
          ...post.headers,
        },
        lookup: guardedLookup(post.allowPrivate),
        signal: AbortSignal.timeout(post.timeoutMs),
      },
      (res: IncomingMessage) => {
        res.resume();
        res.on("end", () => finish(res.statusCode ?? null, null));
        res.on("error", () => finish(res.statusCode ?? null, null));
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      const reason =
        error.name === "AbortError" || error.name === "TimeoutError"
          ? `no answer within ${post.timeoutMs} ms`
          : (error.code ?? error.message);
      finish(null, reason === "EPRIVATEADDRESS" ? "the host resolves to a private address" : reason);
    });
    req.end(post.body);
  });
}
