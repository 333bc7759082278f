import { z } from "zod";
import { ErrorEnvelope } from "./envelope.js";
import { RPC_ROUTES, type RpcRoute } from "./routes.js";

const SECURITY: Record<RpcRoute["auth"], Array<Record<string, string[]>>> = {
  public: [{ appId: [] }],
  jwt: [{ appId: [], bearer: [] }],
  user: [{ appId: [], bearer: [] }, { appId: [], apiKey: [] }],
  node: [{ appId: [], apiKey: [] }],
  user_or_node: [{ appId: [], bearer: [] }, { appId: [], apiKey: [] }],
};

function successEnvelope(payload: z.ZodType) {
  return z.object({ status: z.literal("SUCCESS"), message: z.string(), payload });
}

/** The OpenAPI 3.1 document of the JSON RPCs, made from the same schemas the gateway validates with. */
export function buildOpenApiDocument(options: { serverUrl?: string } = {}): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [name, route] of Object.entries(RPC_ROUTES) as Array<[string, RpcRoute]>) {
    paths[route.path] = {
      post: {
        operationId: name,
        summary: route.summary,
        security: SECURITY[route.auth],
        requestBody: { required: false, content: { "application/json": { schema: z.toJSONSchema(route.request, { io: "input" }) } } },
        responses: {
          "200": { description: route.message, content: { "application/json": { schema: z.toJSONSchema(successEnvelope(route.response)) } } },
          default: { description: "Error envelope; see docs/errors.md for every code.", content: { "application/json": { schema: z.toJSONSchema(ErrorEnvelope) } } },
        },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: "Compute Job Service API", version: "1" },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    components: {
      securitySchemes: {
        appId: { type: "apiKey", in: "header", name: "X-App-ID" },
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
      },
    },
    paths,
  };
}
