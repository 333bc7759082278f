import { z } from "zod";
import { AppId, ArtifactId, JobId } from "./ids.js";
import type { RpcName, RpcRequest } from "./routes.js";

/**
 * The pieces of the OpenAPI document shared by the RPCs (openapi.ts) and the other
 * operations (openapi-http.ts): the tenant header, the path parameters, the tags and the
 * request examples.
 */

/**
 * The JSON Schema of `schema` for the document. An e-mail address is described by its
 * pattern (HTML's rule, the one the service checks, as browsers do for `<input type=email>`)
 * without `format: email`, whose RFC 5322 reading refuses addresses the service takes.
 */
export function jsonSchemaOf(schema: z.ZodType, io: "input" | "output" = "output"): Record<string, unknown> {
  return z.toJSONSchema(schema, {
    io,
    override: (context) => {
      if (context.jsonSchema.format === "email" && context.jsonSchema.pattern !== undefined)
        delete context.jsonSchema.format;
    },
  });
}

/** `X-App-ID`: which application (tenant) a call is for. A header of every call, not a credential. */
export const APP_ID_PARAMETER = {
  name: "X-App-ID",
  in: "header",
  required: true,
  description: "Your application id. Without it: 400 `app.missing`; an unknown one: 401 `app.unknown`.",
  schema: jsonSchemaOf(AppId),
  example: "local",
};

/** A job id in a path. */
export const JOB_ID_PATH_PARAMETER = {
  name: "jobId",
  in: "path",
  required: true,
  schema: jsonSchemaOf(JobId),
  example: "job_0M3h5Kf2a1bC3dE4fG5h",
};

/** An artifact's name in a path. */
export const ARTIFACT_ID_PATH_PARAMETER = {
  name: "artifactId",
  in: "path",
  required: true,
  description: "The artifact's name (docs/api.md, Artifact names).",
  schema: jsonSchemaOf(ArtifactId),
  example: "out.txt",
};

/** One tag per resource, in the order the reference lists them. */
export const TAGS = [
  { name: "auth", description: "Sign-in, one-time codes, tokens and password resets." },
  { name: "account", description: "The signed-in user's own account." },
  { name: "users", description: "A business's users (business admins)." },
  { name: "api-keys", description: "A user's API keys: mint, list, limit, revoke." },
  { name: "jobs", description: "Submit, find, follow, cancel, retry and delete jobs; their logs and exports." },
  { name: "artifacts", description: "A job's files: list, signed upload and download URLs, delete." },
  { name: "schedules", description: "Jobs submitted on a cron schedule." },
  { name: "webhooks", description: "Signed job events POSTed to your URL." },
  { name: "nodes", description: "The node plane (agents) and the nodes a business runs." },
  {
    name: "billing",
    description: "Plans, subscriptions, checkout, compute credit and the payment providers' webhooks.",
  },
  { name: "service", description: "The service's own documents and probes." },
];

/** The resource a path belongs to: its tag. */
export function tagOf(path: string): string {
  if (path.startsWith("/api/auth/")) return "auth";
  if (path.startsWith("/api/compute/jobs/artifacts/") || path.startsWith("/api/compute/artifacts/")) return "artifacts";
  if (path.startsWith("/sandbox/")) return "billing";
  const resource = /^\/api\/compute\/([^/]+)\//.exec(path)?.[1];
  return resource !== undefined && TAGS.some((tag) => tag.name === resource) ? resource : "service";
}

/** A request body to show (and to try first) for the operations a newcomer calls first. */
export const REQUEST_EXAMPLES: { [N in RpcName]?: RpcRequest<N> } = {
  login: { email: "admin@localhost", password: "correct horse battery staple" },
  createApiKey: { name: "laptop", maxJobsPerHour: 100, scopes: ["jobs:read", "jobs:write"] },
  submitJob: { type: "shell", command: ["sh", "-c", "echo hello"], timeout_seconds: 600 },
  listJobs: { state: ["queued", "running"], limit: 20 },
  createSchedule: {
    name: "nightly",
    cron: "0 3 * * *",
    timezone: "Europe/Berlin",
    job: { type: "shell", command: ["./etl.sh"] },
  },
  createWebhook: { url: "https://hooks.example.com/cjs", events: ["job.succeeded", "job.failed"] },
};
