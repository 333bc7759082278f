import fastifyHelmet from "@fastify/helmet";
import type { FastifyInstance } from "fastify";

type Directives = Record<string, string[]>;

/** The portal's policy: nothing but its own files, no inline script or style, never framed. */
export const PORTAL_CSP: Directives = {
  "default-src": ["'self'"],
  "script-src": ["'self'"],
  "style-src": ["'self'"],
  "img-src": ["'self'", "data:"],
  "connect-src": ["'self'"],
  "form-action": ["'self'"],
  "object-src": ["'none'"],
  "base-uri": ["'none'"],
  "frame-ancestors": ["'none'"],
};

/** The API reference's: swagger-ui sets inline styles and draws icons from data: URIs, so /docs alone allows both. */
export const DOCS_CSP: Directives = {
  ...PORTAL_CSP,
  "style-src": ["'self'", "'unsafe-inline'"],
  "form-action": ["'none'"],
};

/**
 * The security headers (helmet's set) of every page and file the browser loads from the
 * gateway, in `scope` only (an encapsulated plugin: the API's answers are unchanged), under
 * `directives` as the whole CSP. Never framed (`X-Frame-Options: DENY`). No HSTS: the TLS
 * terminator in front of the gateway knows which hosts are served over HTTPS.
 */
export async function serveBrowserHeaders(scope: FastifyInstance, directives: Directives): Promise<void> {
  await scope.register(fastifyHelmet, {
    contentSecurityPolicy: { useDefaults: false, directives },
    xFrameOptions: { action: "deny" },
    referrerPolicy: { policy: "no-referrer" },
    strictTransportSecurity: false,
  });
}
