import type { FastifyInstance } from "fastify";
import { serveDocs } from "./serve-docs.js";
import { servePortal } from "./serve-portal.js";

/**
 * What browsers load from the gateway: the portal at `/` and the API reference at `/docs`.
 * Each is its own encapsulated plugin, so its security headers apply to its answers only
 * and the API's answers are unchanged.
 */
export function registerPortal(app: FastifyInstance, options: { portalDir: string }): void {
  void app.register(async (scope) => servePortal(scope, options.portalDir));
  void app.register(async (scope) => serveDocs(scope));
}
