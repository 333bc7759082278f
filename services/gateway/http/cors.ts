import fastifyCors from "@fastify/cors";
import type { FastifyInstance } from "fastify";
import { AppError } from "../../../shared/errors/index.js";
import { requestHeader } from "./request-header.js";

/** The methods the API answers: POST for the RPCs, GET and HEAD for log streams and downloads, PUT for uploads. */
const ALLOW_METHODS = ["GET", "HEAD", "POST", "PUT"];

/** Every request header a browser client of the API may send beyond the CORS-safelisted ones. */
const ALLOW_HEADERS = [
  "Authorization",
  "Content-Type",
  "X-App-ID",
  "X-API-Key",
  "Idempotency-Key",
  "Last-Event-ID",
  "Range",
  "traceparent",
  "tracestate",
  "X-Request-ID",
];

/** Every answer header a client acts on: browsers hide the others from cross-origin scripts. */
const EXPOSE_HEADERS = [
  "X-Request-ID",
  "traceparent",
  "Retry-After",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "RateLimit-Policy",
  "WWW-Authenticate",
  "Allow",
  "Accept-Ranges",
  "Content-Range",
  "Content-Disposition",
  "ETag",
  "Idempotent-Replayed",
];

/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * Why an entry of `CJS_CORS_ORIGINS` is not an origin, or undefined when it is one exactly as
 * a browser sends it in `Origin` (`https://app.example.com`, no path, no trailing slash).
 * A wildcard is refused: the API's credentials are bearer tokens and keys a script sends
 * itself, so each site that may hold them is named.
 */
export function corsOriginProblem(entry: string): string | undefined {
  const shown = JSON.stringify(entry);
  if (entry === "*" || entry === "null") return `${shown} is not allowed: list each origin that may call the API`;
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return `${shown} is not an origin (scheme://host[:port])`;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return `${shown} is not an origin: the scheme must be https:// or http://`;
  if (url.origin !== entry)
    return `${shown} is not an origin as a browser sends it: write ${JSON.stringify(url.origin)}`;
  return undefined;
}

/**
 * Cross-origin access for the browser origins listed, and only those, through @fastify/cors;
 * none listed, no CORS at all (an `OPTIONS` is a 404 like any unknown route). An allowed
 * origin's preflight answers 204 for any path, and every answer to it (errors, 429s and
 * event streams included: the headers are set in `onRequest`, before anything else runs)
 * carries `Access-Control-Allow-Origin`. An unlisted origin's preflight is refused with the
 * error envelope; its other requests are served as usual without CORS headers, so the
 * browser keeps the answer from the page. An `OPTIONS` that is no preflight (no
 * `Access-Control-Request-Method`) is an operation the API does not have. No
 * `Allow-Credentials`: the API uses no cookies.
 */
export function serveCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  const served = {
    methods: ALLOW_METHODS,
    allowedHeaders: ALLOW_HEADERS,
    exposedHeaders: EXPOSE_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    strictPreflight: false,
  };
  void app.register(fastifyCors, {
    delegator: (request, callback) => {
      const origin = requestHeader(request, "origin");
      const preflight =
        request.method === "OPTIONS" && requestHeader(request, "access-control-request-method") !== undefined;
      if (origin !== undefined && allowed.has(origin)) return callback(null, { ...served, origin, preflight });
      if (origin !== undefined && preflight)
        return callback(
          new AppError("cors.origin_not_allowed", `The origin ${origin} may not call this API from a browser.`),
          {},
        );
      callback(null, { origin: false });
    },
  });
}
