import { z } from "zod";
import { errorSpec, type ErrorCode } from "../errors/index.js";
import { ErrorEnvelope } from "./envelope.js";
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_ROUTES, IDEMPOTENT_REPLAYED_HEADER } from "./idempotency.js";
import { commonErrors, ROUTE_ERRORS } from "./route-errors.js";
import { httpPathItems } from "./openapi-http.js";
import { EXPORT_MEDIA_TYPES, EXPORT_ROUTES, type ExportRoute } from "./exports.js";
import { RPC_ROUTES, type RpcName, type RpcRoute } from "./routes.js";
import { ROUTE_SCOPES, scopesOf } from "./scopes.js";
import { APP_ID_PARAMETER, jsonSchemaOf, REQUEST_EXAMPLES, TAGS, tagOf } from "./openapi-parts.js";

/** The credentials each kind of route takes; the tenant (`X-App-ID`) is a header parameter of its own, no credential. */
const SECURITY: Record<RpcRoute["auth"], Array<Record<string, string[]>>> = {
  public: [],
  jwt: [{ bearer: [] }],
  user: [{ bearer: [] }, { apiKey: [] }],
  node: [{ apiKey: [] }],
  user_or_node: [{ bearer: [] }, { apiKey: [] }],
};

/** The security requirements of a route; a user's API key must hold the route's scope, named as the requirement's scope. */
function securityOf(route: RpcRoute, scopes: readonly string[]): Array<Record<string, string[]>> {
  if (scopes.length === 0) return SECURITY[route.auth];
  return SECURITY[route.auth].map((requirement) =>
    "apiKey" in requirement ? { ...requirement, apiKey: [...scopes] } : requirement,
  );
}

/** Routes that a user's credential (JWT or user API key) may call: their answers count against the user's rate limit. */
const COUNTED: Record<RpcRoute["auth"], boolean> = {
  public: false,
  jwt: true,
  user: true,
  node: false,
  user_or_node: true,
};

const RATE_LIMIT_HEADERS = {
  "RateLimit-Limit": {
    description: "Limit of the window closest to running out (a user's credential only).",
    schema: { type: "integer" },
  },
  "RateLimit-Remaining": { description: "Requests left in that window.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Whole seconds until that window resets.", schema: { type: "integer" } },
  "RateLimit-Policy": {
    description: "Both limits with their windows in seconds, e.g. `1000;w=60, 30000;w=3600`.",
    schema: { type: "string" },
  },
};

const IDEMPOTENCY_KEY_PARAMETER = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: "header",
  required: false,
  description:
    '1 to 255 printable ASCII characters. A repeat with the same key and body within 24 h answers as the first did; with another body, 422 `idempotency.key_reused` (docs/api.md, "Idempotent requests").',
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
};
const REPLAYED_HEADERS = {
  [IDEMPOTENT_REPLAYED_HEADER]: {
    description: "`true` when the answer is the first answer of a request with the same Idempotency-Key, replayed.",
    schema: { type: "string", enum: ["true"] },
  },
};

/** The 401 of an operation that takes a credential, with the challenge its `WWW-Authenticate` carries (docs/api.md, "Authentication errors"). */
function unauthorizedResponse(auth: RpcRoute["auth"]) {
  if (auth === "public") return {};
  const takesBearer = auth !== "node";
  const description = takesBearer
    ? `\`auth.missing_credentials\`, \`auth.invalid_credentials\`, \`auth.token_expired\` (a genuine bearer token past its \`exp\`: refresh it and repeat the request)${
        auth === "jwt" ? "" : ", `auth.key_expired` (a user's API key past its `expires_at`)"
      } or \`app.unknown\`.`
    : "`auth.missing_credentials`, `auth.invalid_credentials` or `app.unknown`.";
  const challenge = takesBearer
    ? '`Bearer error="invalid_token", error_description="expired"` for an expired token, `Bearer error="invalid_token"` for another bad one, `Bearer error="invalid_request"` for one that cannot be read, else `Bearer`.'
    : '`ApiKey header="X-API-Key"`: the operation takes a node\'s key.';
  return {
    "401": {
      description,
      headers: { "WWW-Authenticate": { description: challenge, schema: { type: "string" } } },
      content: { "application/json": { schema: jsonSchemaOf(ErrorEnvelope) } },
    },
  };
}

/**
 * The error answers of an operation, one per HTTP status, each naming every code it may
 * carry (`x-error-codes` has them all); merged into what `responses` already says of a
 * status (the 401's challenge, the 429's headers).
 */
function withErrorResponses(responses: Record<string, unknown>, codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<string, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = String(errorSpec(code).http);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const merged: Record<string, unknown> = { ...responses };
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a.localeCompare(b))) {
    const named = list.map((code) => `\`${code}\``).join(", ");
    const existing = merged[status] as { description?: string } | undefined;
    merged[status] = {
      ...existing,
      description: existing?.description ? `${named}. ${existing.description}` : `${named}.`,
      content: { "application/json": { schema: jsonSchemaOf(ErrorEnvelope) } },
    };
  }
  return merged;
}

function successEnvelope(payload: z.ZodType) {
  return z.object({ status: z.literal("SUCCESS"), message: z.string(), payload });
}

/** An export: a JSON body in, a streamed file out (docs/api.md, "Export"); refusals before the first byte are the envelope. */
function exportOperation(name: string, route: ExportRoute) {
  const file = { schema: { type: "string" } };
  return {
    operationId: name,
    summary: route.summary,
    tags: [tagOf(route.path)],
    parameters: [APP_ID_PARAMETER],
    security: SECURITY.user.map((requirement) =>
      "apiKey" in requirement ? { ...requirement, apiKey: [route.scope] } : requirement,
    ),
    "x-api-key-scope": route.scope,
    requestBody: {
      required: true,
      content: { "application/json": { schema: jsonSchemaOf(route.request, "input") } },
    },
    "x-error-codes": [...commonErrors("user", true)],
    responses: withErrorResponses(
      {
        "200": {
          description:
            'The file, streamed (`Content-Disposition: attachment`). NDJSON that fails midway ends with a line `{"error":{"code","message"}}`; CSV is cut off.',
          headers: { "Content-Disposition": { schema: { type: "string" } }, ...RATE_LIMIT_HEADERS },
          content: Object.fromEntries(
            Object.values(EXPORT_MEDIA_TYPES).map((mediaType) => [mediaType.split(";")[0], file]),
          ),
        },
        ...unauthorizedResponse("user"),
        default: {
          description: "Error envelope; see docs/errors.md for every code.",
          content: { "application/json": { schema: jsonSchemaOf(ErrorEnvelope) } },
        },
      },
      commonErrors("user", true),
    ),
  };
}

/** The OpenAPI 3.1 document of every operation (the JSON RPCs, the exports, the streams, signed URLs and webhooks), made from the same schemas the gateway validates with. */
export function buildOpenApiDocument(options: { serverUrl?: string } = {}): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [name, route] of Object.entries(RPC_ROUTES) as Array<[RpcName, RpcRoute]>) {
    const scope = ROUTE_SCOPES[name];
    const example = REQUEST_EXAMPLES[name];
    paths[route.path] = {
      post: {
        operationId: name,
        summary: route.summary,
        tags: [tagOf(route.path)],
        security: securityOf(route, scopesOf(route)),
        // The scope a user's API key needs (docs/api.md, "Scopes"); null: no key scope applies. The security requirement lists any it also needs.
        "x-api-key-scope": scope,
        parameters: [APP_ID_PARAMETER, ...(IDEMPOTENCY_KEY_ROUTES.has(name) ? [IDEMPOTENCY_KEY_PARAMETER] : [])],
        requestBody: {
          // No body is read as `{}`: required where `{}` is refused.
          required: !route.request.safeParse({}).success,
          content: {
            "application/json": {
              schema: jsonSchemaOf(route.request, "input"),
              ...(example ? { example } : {}),
            },
          },
        },
        "x-error-codes": [...new Set([...commonErrors(route.auth, scope !== null), ...ROUTE_ERRORS[name]])],
        responses: withErrorResponses(
          {
            "200": {
              description: route.message,
              ...(COUNTED[route.auth]
                ? { headers: { ...RATE_LIMIT_HEADERS, ...(IDEMPOTENCY_KEY_ROUTES.has(name) ? REPLAYED_HEADERS : {}) } }
                : {}),
              content: { "application/json": { schema: jsonSchemaOf(successEnvelope(route.response)) } },
            },
            ...unauthorizedResponse(route.auth),
            ...(COUNTED[route.auth]
              ? {
                  "429": {
                    description: "`rate.limited`: the user's rate limit is used up; retry after `Retry-After` seconds.",
                    headers: {
                      "Retry-After": {
                        description: "Whole seconds until a retry is admitted.",
                        schema: { type: "integer" },
                      },
                      ...RATE_LIMIT_HEADERS,
                    },
                    content: { "application/json": { schema: jsonSchemaOf(ErrorEnvelope) } },
                  },
                }
              : {}),
            default: {
              description: "Error envelope; see docs/errors.md for every code.",
              content: { "application/json": { schema: jsonSchemaOf(ErrorEnvelope) } },
            },
          },
          [...commonErrors(route.auth, scope !== null), ...ROUTE_ERRORS[name]],
        ),
      },
    };
  }
  for (const [name, route] of Object.entries(EXPORT_ROUTES) as Array<[string, ExportRoute]>)
    paths[route.path] = { post: exportOperation(name, route) };
  Object.assign(paths, httpPathItems());
  return {
    openapi: "3.1.0",
    info: {
      title: "Compute Job Service API",
      version: "1",
      description:
        "Every operation answers the envelope `{status, message, payload}` or `{status, code, message, details}` (docs/errors.md). Send `X-App-ID` with your application id on every call but the signed URLs.",
    },
    servers: [{ url: options.serverUrl ?? "/", description: "The gateway that serves this document" }],
    tags: TAGS,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
      },
    },
    paths,
  };
}
