import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOGUE, ERROR_CODES } from "./catalogue.js";

interface DocumentedCode {
  http: number;
  retryable: boolean;
}

/** Reads the `| code | HTTP status | retryable | meaning |` table of docs/errors.md. */
function readDocumentedCodes(): Map<string, DocumentedCode> {
  const markdown = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
  const documented = new Map<string, DocumentedCode>();
  for (const line of markdown.split("\n")) {
    const row = /^\|\s*`([^`]+)`\s*\|\s*(\d{3})\s*\|\s*(yes|no)\s*\|\s*\S/.exec(line);
    if (!row) continue;
    const [, code = "", http = "", retryable] = row;
    expect(documented.has(code), `docs/errors.md lists ${code} twice`).toBe(false);
    documented.set(code, { http: Number(http), retryable: retryable === "yes" });
  }
  return documented;
}

describe("docs/errors.md", () => {
  const documented = readDocumentedCodes();

  it("documents every catalogue code with its HTTP status and retryable flag", () => {
    const expected = Object.fromEntries(
      ERROR_CODES.map((code) => [
        code,
        { http: ERROR_CATALOGUE[code].http, retryable: ERROR_CATALOGUE[code].retryable },
      ]),
    );
    const listed = Object.fromEntries(ERROR_CODES.map((code) => [code, documented.get(code)]));
    expect(listed).toEqual(expected);
  });

  it("documents no code that the catalogue lacks", () => {
    expect([...documented.keys()].filter((code) => !(ERROR_CODES as string[]).includes(code))).toEqual([]);
  });
});
