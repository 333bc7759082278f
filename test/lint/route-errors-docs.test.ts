import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument, RPC_ROUTES } from "../../shared/contract/index.js";
import { ERROR_CODES } from "../../shared/errors/index.js";

/**
 * The error codes `/openapi.json` names for each operation (`x-error-codes`, from
 * `ROUTE_ERRORS` and the codes every operation of its kind shares) include every code its
 * section of docs/api.md lists, and only codes of the catalogue.
 */
const API_DOC = readFileSync(join(import.meta.dirname, "../../docs/api.md"), "utf8");
const document = buildOpenApiDocument() as { paths: Record<string, { post?: { "x-error-codes"?: string[] } }> };

/** The codes named in the tables and error lines of the section that documents `path`. */
function documentedCodes(path: string): string[] {
  const section = API_DOC.split(/\n(?=#{2,4} )/).find((text) =>
    new RegExp(`^\`(?:POST )?${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\``, "m").test(text),
  );
  if (section === undefined) return [];
  const codes = new Set<string>();
  for (const [, cell] of section.matchAll(/^\| \d{3} \| ([^|]+) \|/gm))
    for (const [, code] of cell!.matchAll(/`([a-z_]+\.[a-z_]+)`/g)) codes.add(code!);
  for (const [, code] of section.matchAll(/Errors?:[^\n]*?`([a-z_]+\.[a-z_]+)`/g)) codes.add(code!);
  return [...codes];
}

describe("the error codes of each operation", () => {
  it("include every code its docs/api.md section lists, and are all in the catalogue", () => {
    for (const route of Object.values(RPC_ROUTES)) {
      const listed = document.paths[route.path]?.post?.["x-error-codes"] ?? [];
      expect(listed.length, route.path).toBeGreaterThan(0);
      for (const code of listed) expect(ERROR_CODES, `${route.path}: ${code}`).toContain(code);
      for (const code of documentedCodes(route.path)) expect(listed, `${route.path} documents ${code}`).toContain(code);
    }
  });
});
