import type { FastifyInstance } from "fastify";

export interface RegisteredRoute {
  method: string;
  url: string;
}

const lists = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/**
 * Records every route registered on `app` from now on (plugins included), so that a test
 * can hold `/openapi.json` to exactly what the gateway serves.
 */
export function trackRoutes(app: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  lists.set(app, routes);
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
}

/** The routes `trackRoutes` saw; empty for an app it was not given. */
export function routesOf(app: FastifyInstance): readonly RegisteredRoute[] {
  return lists.get(app) ?? [];
}
