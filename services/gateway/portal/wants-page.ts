import type { FastifyRequest } from "fastify";

/** A browser navigating (it asks for HTML), as opposed to an API client that mistyped a path. */
export function wantsPage(request: FastifyRequest): boolean {
  return (request.headers.accept ?? "").includes("text/html");
}
