import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Validator } from "@seriousme/openapi-schema-validator";
import { routesOf } from "../../services/gateway/http/route-list.js";
import { PORTAL_PAGES } from "../../services/gateway/portal/serve-portal.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { startGateway, type RunningGateway } from "../harness/system.js";

/**
 * `/openapi.json` as the gateway serves it: a valid OpenAPI 3.1 document (checked against
 * the specification's schema) that names exactly the routes the gateway registers, with
 * each operation's method. The portal's pages, its assets and `/docs` are for browsers,
 * not API operations, and are left out on purpose.
 */
let nats: NatsHarness;
let gateway: RunningGateway;
let document: { openapi: string; paths: Record<string, Record<string, unknown>> };

beforeAll(async () => {
  nats = await startNats();
  gateway = await startGateway(nats.url);
  document = (await (await fetch(`${gateway.baseUrl}/openapi.json`)).json()) as typeof document;
});

afterAll(async () => {
  await gateway?.stop();
  await nats?.stop();
});

const forBrowsers = (url: string) =>
  url === "/" ||
  url === "/docs" ||
  url.startsWith("/docs/") ||
  url.startsWith("/assets/") ||
  (PORTAL_PAGES as readonly string[]).includes(url);
const asOpenApiPath = (url: string) => url.replace(/:([A-Za-z]+)/g, "{$1}");

describe("/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(document as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe("3.1.0");
  });

  it("names every path the gateway serves, and no other", () => {
    const served = new Set(
      routesOf(gateway.gateway.app)
        .map((route) => route.url)
        .filter((url) => !forBrowsers(url))
        .map(asOpenApiPath),
    );
    expect([...served].sort()).toEqual(Object.keys(document.paths).sort());
  });

  it("each documented operation is served with its method", () => {
    const app = gateway.gateway.app;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item)) {
        const url = path.replace(/\{([A-Za-z]+)\}/g, ":$1");
        expect(app.hasRoute({ method: method.toUpperCase() as "GET", url }), `${method.toUpperCase()} ${path}`).toBe(
          true,
        );
      }
    }
  });
});
