import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const biome = join(root, "node_modules/.bin/biome");
const made: string[] = [];

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** What `biome lint` (the project's configuration, as `make lint` runs it) says of these files. */
function lint(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "cjs-cycles-"));
  made.push(dir);
  cpSync(join(root, "biome.jsonc"), join(dir, "biome.jsonc"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const run = spawnSync(biome, ["lint", "--vcs-enabled=false", "."], { cwd: dir, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("the import-cycle rule (make lint)", () => {
  it("refuses two files that import each other, a type-only import included", () => {
    const cycle = lint({
      "a.ts": 'import type { B } from "./b.js";\nexport interface A { b?: B }\n',
      "b.ts": 'import type { A } from "./a.js";\nexport interface B { a?: A }\n',
    });
    expect(cycle.status).not.toBe(0);
    expect(cycle.output).toContain("noImportCycles");
  });

  it("passes files that import one way", () => {
    const oneWay = lint({
      "a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
      "b.ts": "export const b = 1;\n",
    });
    expect(oneWay.output).not.toContain("noImportCycles");
    expect(oneWay.status).toBe(0);
  });

  it("finds none in the repository", () => {
    const run = spawnSync(biome, ["lint", "."], { cwd: root, encoding: "utf8" });
    expect(`${run.stdout}${run.stderr}`).not.toContain("noImportCycles");
    expect(run.status).toBe(0);
  });
});
