import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "./openapi.js";
import { EXPORT_ROUTES } from "./exports.js";
import { REQUEST_EXAMPLES } from "./openapi-parts.js";
import { RPC_ROUTES } from "./routes.js";

describe("OpenAPI document", () => {
  const document = buildOpenApiDocument() as { paths: Record<string, { post: Record<string, unknown> }> };

  it("has one POST operation per RPC of the route table and per export, named after it", () => {
    for (const [name, route] of [...Object.entries(RPC_ROUTES), ...Object.entries(EXPORT_ROUTES)])
      expect(document.paths[route.path]?.post.operationId, route.path).toBe(name);
    expect(document.paths["/api/auth/LOGIN_EMAIL"]?.post.operationId).toBe("login");
  });

  it("describes request fields with the wire names, quotas included", () => {
    const body = JSON.stringify(document.paths["/api/compute/api-keys/create"]?.post.requestBody);
    for (const field of ["name", "maxJobsPerHour", "maxConcurrentJobs", "allowedJobTypes"])
      expect(body).toContain(`"${field}"`);
  });

  it("names the scope an API key needs on each operation, in its security requirement and in x-api-key-scope", () => {
    const submit = document.paths["/api/compute/jobs/submit"]?.post;
    expect(submit?.["x-api-key-scope"]).toBe("jobs:write");
    expect(submit?.security).toEqual([{ bearer: [] }, { apiKey: ["jobs:write"] }]);
    expect(document.paths["/api/compute/api-keys/create"]?.post["x-api-key-scope"]).toBeNull();
    expect(document.paths["/api/compute/nodes/poll"]?.post.security).toEqual([{ apiKey: [] }]);
  });

  it("marks session-only operations as bearer-only", () => {
    expect(document.paths["/api/compute/api-keys/create"]?.post.security).toEqual([{ bearer: [] }]);
  });

  it("takes X-App-ID as a required header parameter of every operation, not as a credential; public ones need none", () => {
    for (const [name, route] of [...Object.entries(RPC_ROUTES), ...Object.entries(EXPORT_ROUTES)]) {
      const parameters = document.paths[route.path]?.post.parameters as Array<{ name: string; required: boolean }>;
      expect(
        parameters.find((parameter) => parameter.name === "X-App-ID"),
        name,
      ).toMatchObject({ required: true });
    }
    expect(JSON.stringify((document as { components?: unknown }).components)).not.toContain("X-App-ID");
    expect(document.paths["/api/auth/LOGIN_EMAIL"]?.post.security).toEqual([]);
  });

  it("requires a request body exactly where an empty one is refused, with examples on the first operations", () => {
    const body = (path: string) => document.paths[path]?.post.requestBody as { required: boolean };
    expect(body(RPC_ROUTES.login.path).required).toBe(true);
    expect(body(RPC_ROUTES.cancelJob.path).required).toBe(true);
    expect(body(RPC_ROUTES.listJobs.path).required).toBe(false);
    expect(body(RPC_ROUTES.listApiKeys.path).required).toBe(false);
    for (const [name, example] of Object.entries(REQUEST_EXAMPLES)) {
      const route = RPC_ROUTES[name as keyof typeof RPC_ROUTES];
      expect(route.request.safeParse(example).success, name).toBe(true);
      expect(JSON.stringify(document.paths[route.path]?.post.requestBody)).toContain('"example"');
    }
  });

  it("tags each operation with its resource, lists the tags, and names the serving gateway as its server", () => {
    const doc = document as unknown as { tags: Array<{ name: string }>; servers: Array<{ url: string }> };
    const known = new Set(doc.tags.map((tag) => tag.name));
    for (const item of Object.values(document.paths as Record<string, Record<string, { tags?: string[] }>>))
      for (const operation of Object.values(item)) expect(known.has(operation.tags?.[0] ?? "")).toBe(true);
    expect(document.paths[RPC_ROUTES.submitJob.path]?.post.tags).toEqual(["jobs"]);
    expect(document.paths[RPC_ROUTES.presignUpload.path]?.post.tags).toEqual(["artifacts"]);
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })]);
  });

  it("gives path ids their pattern and uses no regular expression only JavaScript reads", () => {
    const text = JSON.stringify(document);
    expect(text).not.toContain("[^]");
    const stream = (
      document.paths as unknown as Record<string, Record<string, { parameters: Array<Record<string, unknown>> }>>
    )["/api/compute/jobs/{jobId}/logs"]?.get;
    expect(stream?.parameters.find((parameter) => parameter.name === "jobId")).toMatchObject({
      schema: { pattern: expect.stringContaining("job_") },
    });
  });

  it("documents the RateLimit headers and the 429 on operations a user's credential calls, not on public or node-only ones", () => {
    const responses = (path: string) =>
      document.paths[path]?.post.responses as Record<string, { headers?: Record<string, unknown> }>;
    const listKeys = responses("/api/compute/api-keys/list");
    expect(Object.keys(listKeys["200"]?.headers ?? {})).toEqual([
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
      "RateLimit-Policy",
    ]);
    expect(Object.keys(listKeys["429"]?.headers ?? {})).toContain("Retry-After");
    for (const path of ["/api/auth/LOGIN_EMAIL", "/api/compute/nodes/poll"]) {
      expect(responses(path)["200"]?.headers).toBeUndefined();
      // Sign-in's own 429 (auth.too_many_attempts) is no rate limit: no RateLimit headers.
      expect(responses(path)["429"]?.headers).toBeUndefined();
    }
  });

  it("documents the 401 with its WWW-Authenticate challenge, naming auth.token_expired where a bearer token is taken", () => {
    const unauthorized = (path: string) =>
      (
        document.paths[path]?.post.responses as Record<
          string,
          { description: string; headers?: Record<string, { description: string }> } | undefined
        >
      )["401"];
    for (const path of ["/api/compute/api-keys/list", "/api/compute/api-keys/create"]) {
      expect(unauthorized(path)?.description).toContain("auth.token_expired");
      expect(unauthorized(path)?.headers?.["WWW-Authenticate"]?.description).toContain('error_description="expired"');
    }
    expect(unauthorized("/api/compute/nodes/poll")?.description).not.toContain("auth.token_expired");
    expect(unauthorized("/api/compute/nodes/poll")?.headers?.["WWW-Authenticate"]?.description).toContain(
      'ApiKey header="X-API-Key"',
    );
    // Sign-in answers 401 auth.login_failed, with no challenge: it takes no credential.
    expect(unauthorized("/api/auth/LOGIN_EMAIL")?.headers).toBeUndefined();
    expect(unauthorized("/api/auth/LOGIN_EMAIL")?.description).toContain("auth.login_failed");
  });

  it("describes the log stream's events with the schemas of their data, and the signed artifact URLs as needing no credential", () => {
    const stream = (document.paths as Record<string, Record<string, Record<string, unknown>>>)[
      "/api/compute/jobs/{jobId}/logs"
    ]?.get;
    expect(Object.keys((stream?.["x-events"] ?? {}) as object)).toEqual(["log", "end"]);
    expect(JSON.stringify(stream?.["x-events"])).toContain('"dropped_lines"');
    const upload = (document.paths as Record<string, Record<string, Record<string, unknown>>>)[
      "/api/compute/artifacts/upload/{jobId}/{artifactId}"
    ]?.put;
    expect(upload?.security).toEqual([]);
  });

  it("documents the Idempotency-Key header and the Idempotent-Replayed answer header on submit and retry only", () => {
    const operation = (path: string) =>
      document.paths[path]!.post as {
        parameters?: Array<{ name: string; in: string }>;
        responses: Record<string, { headers?: Record<string, unknown> }>;
      };
    for (const route of [RPC_ROUTES.submitJob, RPC_ROUTES.retryJob]) {
      expect(operation(route.path).parameters).toContainEqual(
        expect.objectContaining({ name: "Idempotency-Key", in: "header" }),
      );
      expect(operation(route.path).responses["200"]!.headers).toHaveProperty("Idempotent-Replayed");
    }
    expect(operation(RPC_ROUTES.cancelJob.path).parameters?.map((parameter) => parameter.name)).toEqual(["X-App-ID"]);
    expect(operation(RPC_ROUTES.cancelJob.path).responses["200"]!.headers).not.toHaveProperty("Idempotent-Replayed");
  });

  it("names each operation's error codes under the status that carries them", () => {
    const submit = document.paths["/api/compute/jobs/submit"]?.post as {
      "x-error-codes": string[];
      responses: Record<string, { description: string }>;
    };
    expect(submit["x-error-codes"]).toEqual(
      expect.arrayContaining(["queue.full", "quota.key_budget_exhausted", "auth.scope_missing", "rate.limited"]),
    );
    expect(submit.responses["402"]?.description).toContain("resource.limit_reached");
    expect(submit.responses["503"]?.description).toContain("queue.full");
    const poll = document.paths["/api/compute/nodes/poll"]?.post as { "x-error-codes": string[] };
    expect(poll["x-error-codes"]).not.toContain("auth.token_expired");
  });

  it("describes an export's answer as a CSV or NDJSON file", () => {
    const ok = (
      document.paths["/api/compute/jobs/export"]?.post.responses as Record<
        string,
        { content?: Record<string, unknown> }
      >
    )["200"];
    expect(Object.keys(ok?.content ?? {})).toEqual(["text/csv", "application/x-ndjson"]);
    expect(document.paths["/api/compute/billing/ledger/export"]?.post.operationId).toBe("exportLedger");
  });
});
