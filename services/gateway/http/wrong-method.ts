import type { FastifyInstance, FastifyReply } from "fastify";
import { AppError } from "../../../shared/errors/index.js";
import { routesOf } from "./route-list.js";

/**
 * A known path asked with a method it does not serve answers 405 `route.method_not_allowed`
 * with `Allow` listing the methods it does (RFC 9110 §15.5.6), whatever the method, TRACE
 * and QUERY included; an unknown path stays 404. Registered last, as a plugin, so it sees
 * every route the others registered. OPTIONS is left alone: it is CORS's preflight when
 * CORS is on, and an operation the API does not have when it is off. Wildcard routes (the
 * portal's and /docs's static files) are left alone too.
 */
export function answerWrongMethods(app: FastifyInstance): void {
  void app.register(async (scope) => {
    const served = new Map<string, Set<string>>();
    for (const { method, url } of routesOf(app)) {
      if (url.endsWith("*")) continue;
      served.set(url, (served.get(url) ?? new Set<string>()).add(method));
    }
    for (const [url, methods] of served) {
      const allow = [...methods].filter((method) => method !== "OPTIONS").sort();
      const others = scope.supportedMethods.filter((method) => !methods.has(method) && method !== "OPTIONS");
      const refuse = async (_request: unknown, reply: FastifyReply) => {
        reply.header("allow", allow.join(", "));
        throw new AppError("route.method_not_allowed", `Use ${allow.join(" or ")} for this path.`, {
          details: { allow },
        });
      };
      // Refused in onRequest, before the body is looked at: a QUERY without Content-Type, or a body of any type, is still a 405.
      scope.route({ method: others, url, onRequest: refuse, handler: refuse });
    }
  });
}
