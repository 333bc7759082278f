import { z } from "zod";
import { Artifact } from "./artifacts.js";
import { SANDBOX_SIGNATURE_HEADER, WebhookReply } from "./billing.js";
import { ErrorEnvelope } from "./envelope.js";
import { LogEndEventData, LogEventData } from "./logs.js";
import { APP_ID_PARAMETER, ARTIFACT_ID_PATH_PARAMETER, JOB_ID_PATH_PARAMETER, jsonSchemaOf } from "./openapi-parts.js";

/**
 * The operations of the HTTP API that are no JSON RPC: the job log stream (Server-Sent
 * Events), an artifact's download with a credential, the signed artifact upload and download, the payment providers' webhook, the
 * sandbox checkout page, and the service's own documents and probes. Their behaviour is in
 * docs/api.md; the route test keeps these paths equal to what the gateway registers.
 */

const errorEnvelope = { "application/json": { schema: jsonSchemaOf(ErrorEnvelope) } };
const refused = (description: string) => ({ description, content: errorEnvelope });
const envelopeOf = (payload: z.ZodType) => ({
  "application/json": {
    schema: jsonSchemaOf(z.object({ status: z.literal("SUCCESS"), message: z.string(), payload })),
  },
});

const signedUrlParameters = [
  {
    name: "expires",
    in: "query",
    required: true,
    description: "Part of the signed URL: leave as it is.",
    schema: { type: "string" },
  },
  {
    name: "signature",
    in: "query",
    required: true,
    description: "Part of the signed URL: leave as it is.",
    schema: { type: "string" },
  },
];
const artifactPathParameters = [JOB_ID_PATH_PARAMETER, ARTIFACT_ID_PATH_PARAMETER];
/** A signed URL is its own credential: no X-App-ID, no key. */
const SIGNED_URL: never[] = [];

const LOG_FRAMES = [
  "Each stored line is a `log` event whose `id` is its position in the log store (send it back as `Last-Event-ID` to resume);",
  "the last event is `end`, once the job is terminal and every line was sent; `: keep-alive` comments keep the stream open.",
  "Every `data` is one line of JSON: `x-events` gives the schema of each event's data.",
].join(" ");

/** A log event's id: a whole number, written without leading zeros, that a JavaScript number holds exactly. */
const EVENT_ID_PATTERN = "^(0|[1-9][0-9]{0,14})$";

/** One event of the stream as a client's parser frames it (`x-events` has the schema of each event's data). */
const LOG_EVENT = {
  type: "object",
  properties: {
    event: { type: "string", enum: ["log", "end"] },
    id: { type: "string", pattern: EVENT_ID_PATTERN },
    data: { type: "string", contentMediaType: "application/json" },
  },
  required: ["event", "data"],
};

function logStream() {
  return {
    get: {
      operationId: "streamJobLogs",
      summary:
        "A job's log as Server-Sent Events: every stored line, then `end`. With headers (JWT, or an API key with jobs:read), or as a signed stream URL with none.",
      tags: ["jobs"],
      security: [{ bearer: [] }, { apiKey: ["jobs:read"] }, {}],
      "x-api-key-scope": "jobs:read",
      parameters: [
        JOB_ID_PATH_PARAMETER,
        {
          ...APP_ID_PARAMETER,
          required: false,
          description: "Your application id; not sent with a signed stream URL.",
        },
        {
          name: "Last-Event-ID",
          in: "header",
          required: false,
          description: "Resume after this event id.",
          schema: { type: "string", pattern: EVENT_ID_PATTERN },
        },
        {
          name: "last_event_id",
          in: "query",
          required: false,
          description: "The same, for clients that cannot set the header; the header wins.",
          schema: { type: "string", pattern: EVENT_ID_PATTERN },
        },
        {
          name: "caller",
          in: "query",
          required: false,
          description: "Part of a signed stream URL (from jobs/logs/stream-url).",
          schema: { type: "string" },
        },
        {
          name: "expires",
          in: "query",
          required: false,
          description: "Part of a signed stream URL.",
          schema: { type: "string" },
        },
        {
          name: "signature",
          in: "query",
          required: false,
          description: "Part of a signed stream URL.",
          schema: { type: "string" },
        },
      ],
      responses: {
        "200": { description: LOG_FRAMES, content: { "text/event-stream": { schema: LOG_EVENT } } },
        "400": refused("`app.missing`, or `request.invalid` (a job id or event id that is not one)."),
        "401": refused(
          "`app.unknown`, `auth.missing_credentials`, `auth.invalid_credentials`, `auth.token_expired`, `auth.key_expired`; with `WWW-Authenticate`.",
        ),
        "403": refused(
          "`permission.denied` (a node key), `auth.scope_missing`, `url.signature_invalid`, `url.expired`.",
        ),
        "404": refused("`resource.not_found`: no such job in the caller's business."),
        "429": refused(
          "`rate.limited` (the user's rate limit; opening through a signed URL counts as its user's request), or `logs.stream_limit_reached` (streams open at once for the user, the signed URL or the business on this gateway); retry after `Retry-After`.",
        ),
        "503": refused(
          "`service.unavailable`: NATS unreachable, or this gateway streams as many jobs' logs as it may (`details.reason`); retry after `Retry-After`.",
        ),
      },
      "x-events": {
        log: { id: "The line's position in the log store.", data: jsonSchemaOf(LogEventData) },
        end: { data: jsonSchemaOf(LogEndEventData) },
      },
    },
  };
}

function artifactUpload() {
  return {
    put: {
      operationId: "uploadArtifact",
      tags: ["artifacts"],
      summary:
        "Store an artifact's bytes through a signed upload URL (from presign-upload or an agent's attempt); replaces one of the same name once complete.",
      security: SIGNED_URL,
      parameters: [...artifactPathParameters, ...signedUrlParameters],
      requestBody: { required: true, content: { "*/*": { schema: { type: "string", format: "binary" } } } },
      responses: {
        "200": { description: "Artifact stored", content: envelopeOf(Artifact) },
        "400": refused("`request.invalid`: a bad name or media type, or a body shorter than its Content-Length."),
        "403": refused("`url.signature_invalid`, `url.expired`."),
        "413": refused(
          "`request.too_large`: over CJS_MAX_ARTIFACT_BYTES; `artifacts.quota_exceeded`: over what the business's artifact budget leaves. Nothing was stored; the connection is closed after the answer.",
        ),
        "503": refused(
          "`service.unavailable`: storage is unreachable, or the artifact store is full (`details.reason`); nothing was stored.",
        ),
      },
    },
  };
}

const ARTIFACT_BYTES = { "*/*": { schema: { type: "string", format: "binary" } } };
const ARTIFACT_HEADERS = {
  ETag: { description: "The SHA-256 of the content, in quotes.", schema: { type: "string" } },
  "Content-Disposition": { schema: { type: "string" } },
  "Accept-Ranges": { schema: { type: "string" } },
};
const RANGE_PARAMETERS = [
  { name: "Range", in: "header", required: false, schema: { type: "string" } },
  { name: "If-Range", in: "header", required: false, schema: { type: "string" } },
];
const ARTIFACT_ANSWERS = {
  "200": { description: "The whole artifact.", headers: ARTIFACT_HEADERS, content: ARTIFACT_BYTES },
  "206": { description: "The range asked for (`Content-Range`).", headers: ARTIFACT_HEADERS, content: ARTIFACT_BYTES },
  "416": refused("`request.range_not_satisfiable`: the range starts beyond the end; `Content-Range: bytes */<size>`."),
};

function artifactDownload() {
  const operation = (method: "get" | "head") => ({
    operationId: method === "get" ? "downloadArtifact" : "headArtifact",
    tags: ["artifacts"],
    summary:
      method === "get"
        ? "An artifact's bytes through a signed download URL; one byte range allowed."
        : "The download's headers without its body.",
    security: SIGNED_URL,
    parameters: [...artifactPathParameters, ...signedUrlParameters, ...RANGE_PARAMETERS],
    responses: {
      ...ARTIFACT_ANSWERS,
      "403": refused("`url.signature_invalid`, `url.expired`."),
      "404": refused("`resource.not_found`: the artifact no longer exists."),
    },
  });
  return { get: operation("get"), head: operation("head") };
}

function artifactWithCredential() {
  return {
    get: {
      operationId: "getArtifact",
      summary:
        "One artifact of a job of the caller's business, its bytes at once, with X-App-ID and a JWT or an API key with jobs:read (for scripts and CI runners: presign-download takes a JWT only); one byte range allowed.",
      tags: ["artifacts"],
      security: [{ bearer: [] }, { apiKey: ["jobs:read"] }],
      "x-api-key-scope": "jobs:read",
      parameters: [...artifactPathParameters, APP_ID_PARAMETER, ...RANGE_PARAMETERS],
      responses: {
        ...ARTIFACT_ANSWERS,
        "400": refused("`app.missing`, or `request.invalid` (a job id or artifact name that is not one)."),
        "401": refused(
          "`app.unknown`, `auth.missing_credentials`, `auth.invalid_credentials`, `auth.token_expired`, `auth.key_expired`; with `WWW-Authenticate`.",
        ),
        "403": refused("`permission.denied` (a node key), `auth.scope_missing`."),
        "404": refused("`resource.not_found`: no such job in the caller's business, or no such artifact of it."),
        "429": refused("`rate.limited`; retry after `Retry-After`."),
        "503": refused("`service.unavailable`; retry after `Retry-After`."),
      },
    },
  };
}

function billingWebhook() {
  return {
    post: {
      operationId: "receiveBillingWebhook",
      tags: ["billing"],
      summary:
        "A payment provider's event (Stripe, or the sandbox), applied once; the signature over the raw body is the credential (no X-App-ID).",
      security: [],
      parameters: [
        { name: "provider", in: "path", required: true, schema: { type: "string", enum: ["stripe", "sandbox"] } },
        {
          name: "Stripe-Signature",
          in: "header",
          required: false,
          description: "Stripe's signature (provider stripe).",
          schema: { type: "string" },
        },
        {
          name: SANDBOX_SIGNATURE_HEADER,
          in: "header",
          required: false,
          description: "The sandbox provider's signature (provider sandbox): `t=<unix seconds>,v1=<hex HMAC-SHA256>`.",
          schema: { type: "string" },
        },
      ],
      requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
      responses: {
        "200": { description: "Event received", content: envelopeOf(WebhookReply) },
        "400": refused("`webhook.signature_invalid` or `request.invalid`; nothing changed."),
        "404": refused("`resource.not_found`: no such provider is configured."),
        "413": refused("`request.too_large`."),
        "503": refused("`service.unavailable`: the provider retries."),
      },
    },
  };
}

function sandboxCheckout() {
  const html = { "text/html": { schema: { type: "string" } } };
  const sessionId = {
    name: "sessionId",
    in: "path",
    required: true,
    description: "The checkout session: the page's own credential.",
    schema: { type: "string" },
  };
  return {
    get: {
      operationId: "showSandboxCheckout",
      tags: ["billing"],
      summary: "The sandbox payment provider's checkout page (an HTML form: pay or cancel).",
      security: [],
      parameters: [sessionId],
      responses: {
        "200": { description: "The page.", content: html },
        "400": { description: "Not a session id.", content: html },
        "404": { description: "No such session.", content: html },
      },
    },
    post: {
      operationId: "actOnSandboxCheckout",
      tags: ["billing"],
      summary: "Pay or cancel a sandbox checkout (the page's form); redirects to the success or cancel URL.",
      security: [],
      parameters: [sessionId],
      requestBody: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: {
              type: "object",
              properties: { action: { type: "string", enum: ["pay", "cancel"] } },
              required: ["action"],
            },
          },
        },
      },
      responses: {
        "303": { description: "To the checkout's success_url or cancel_url." },
        "400": { description: "No action given, or not a session id.", content: html },
        "404": { description: "No such session.", content: html },
        "502": {
          description: "Paid, but the payment's confirmation did not get through: press Pay again.",
          content: html,
        },
      },
    },
  };
}

function plainGet(
  operationId: string,
  summary: string,
  schema: Record<string, unknown>,
  more: Record<string, unknown> = {},
) {
  return {
    get: {
      operationId,
      summary,
      tags: ["service"],
      security: [],
      responses: { "200": { description: summary, content: { "application/json": { schema } } }, ...more },
    },
  };
}

/** The path items of every operation that is no JSON RPC, by OpenAPI path. */
export function httpPathItems(): Record<string, unknown> {
  return {
    "/api/compute/jobs/{jobId}/logs": logStream(),
    "/api/compute/artifacts/upload/{jobId}/{artifactId}": artifactUpload(),
    "/api/compute/artifacts/download/{jobId}/{artifactId}": artifactDownload(),
    "/api/compute/jobs/{jobId}/artifacts/{artifactId}": artifactWithCredential(),
    "/api/compute/billing/webhooks/{provider}": billingWebhook(),
    "/sandbox/checkout/{sessionId}": sandboxCheckout(),
    "/.well-known/jwks.json": plainGet("jwks", "The public keys that verify access tokens (JWKS).", {
      type: "object",
      properties: { keys: { type: "array" } },
    }),
    "/openapi.json": plainGet("openApiDocument", "This document.", { type: "object" }),
    "/healthz": plainGet("healthz", "Liveness: the process answers.", {
      type: "object",
      properties: { status: { type: "string" } },
    }),
    "/readyz": plainGet(
      "readyz",
      "Readiness: NATS and the gateway's own checks.",
      { type: "object" },
      { "503": { description: "Not ready; the body names the failing checks." } },
    ),
  };
}
