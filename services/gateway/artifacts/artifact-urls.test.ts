import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors/index.js";
import { urlSigner } from "../http/signed-url.js";
import { LiveRing, ringOfOne } from "../secrets/key-ring.js";
import { signArtifactUrl, verifyArtifactUrl, type ArtifactGrant } from "./artifact-urls.js";

const now = Date.parse("2026-06-01T00:00:00Z");
const urls = urlSigner(new LiveRing(ringOfOne("k1", randomBytes(32))), { now: () => now });
const origin = "https://api.example.com";
const jobId = "job_0VbeygdjkkWnwRC9cwe1";
const grant: ArtifactGrant = {
  app_id: "acme",
  business_id: "biz_ecxUgow1WBd5BpAdgW2q",
  attempt: null,
  content_type: "text/csv; charset=utf-8",
};

/** What the gateway sees of a URL: its path and its parsed query. */
function request(url: string): { path: string; query: Record<string, string> } {
  const parsed = new URL(url);
  return { path: parsed.pathname, query: Object.fromEntries(parsed.searchParams) };
}

function codeOf(check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? error.code : "thrown";
  }
}

describe("artifact URLs", () => {
  const signed = signArtifactUrl(urls, origin, {
    kind: "download",
    job_id: jobId,
    artifact_id: "out.csv",
    grant,
    expiresAtMs: now + 60_000,
  });

  it("give back the grant they were signed with, for their method and path", () => {
    const { path, query } = request(signed);
    expect(path).toBe(`/api/compute/artifacts/download/${jobId}/out.csv`);
    expect(verifyArtifactUrl(urls, "GET", path, query)).toEqual(grant);
    expect(codeOf(() => verifyArtifactUrl(urls, "PUT", path, query))).toBe("url.signature_invalid");
  });

  it("refuse a changed tenancy, attempt or content type", () => {
    const { path, query } = request(signed);
    for (const changed of [
      { app_id: "other" },
      { business_id: "biz_aaaaaaaaaaaaaaaaaaaa" },
      { attempt: "2" },
      { content_type: "text/html" },
    ]) {
      expect(
        codeOf(() => verifyArtifactUrl(urls, "GET", path, { ...query, ...changed })),
        JSON.stringify(changed),
      ).toBe("url.signature_invalid");
    }
    const { content_type: _dropped, ...withoutType } = query;
    expect(codeOf(() => verifyArtifactUrl(urls, "GET", path, withoutType))).toBe("url.signature_invalid");
  });

  it("for an agent, cover every name of one job once the placeholder is replaced", () => {
    const agentGrant = { ...grant, attempt: 3, content_type: null };
    const template = signArtifactUrl(urls, origin, {
      kind: "upload",
      job_id: jobId,
      artifact_id: null,
      grant: agentGrant,
      expiresAtMs: now + 60_000,
    });
    expect(template).toContain(`/api/compute/artifacts/upload/${jobId}/{artifact_id}?`);
    for (const name of ["a.txt", "model.bin"]) {
      const { path, query } = request(template.replace("{artifact_id}", name));
      expect(verifyArtifactUrl(urls, "PUT", path, query)).toEqual(agentGrant);
    }
    const { path, query } = request(
      template.replace(jobId, "job_0VbeygdjkkWnwRC9cwe2").replace("{artifact_id}", "a.txt"),
    );
    expect(codeOf(() => verifyArtifactUrl(urls, "PUT", path, query))).toBe("url.signature_invalid");
  });
});
