/**
 * The repository's programs as the tests start them. Under tsx, every start transformed and
 * loaded the program's whole module graph again: 1.3 s of CPU for a scheduler that exits at
 * once, against 0.45 s from a bundle; the ten files that start the most programs took 268 s
 * of CPU under tsx and 146 s from bundles. So each entry point is bundled once per run
 * (`buildPrograms`, the suite's global setup) with esbuild, the transform tsx applies,
 * packages left to node_modules, and started with plain node. `services/dev` stays under
 * tsx: it finds the repository from its own file's path.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { build } from "esbuild";

const ROOT = resolve(import.meta.dirname, "../..");
/** Where the runs' bundles go: inside the repository, so their imports of packages find node_modules. */
const BUNDLES_PARENT = join(ROOT, ".tools", "test-programs");
/**
 * The bundles of this run, set by `buildPrograms` for the test processes it forks. Not a
 * `CJS_` name: the programs inherit it, and warn of every `CJS_` setting they do not know.
 */
const BUNDLES_VARIABLE = "TEST_PROGRAMS_DIR";
/** A run killed before its teardown leaves its bundles: a later run removes them after a day. */
const STALE_AFTER_MS = 24 * 60 * 60 * 1000;

/** The programs bundled: every `main.ts` a test starts, but `services/dev`. */
export const BUNDLED_PROGRAMS = [
  "services/gateway/main.ts",
  "services/scheduler/main.ts",
  "services/node-registry/main.ts",
  "services/log-relay/main.ts",
  "services/billing/main.ts",
  "services/webhooks/main.ts",
  "services/admin/main.ts",
  "clients/agent/main.ts",
  "clients/cli/main.ts",
] as const;

function bundleName(program: string): string {
  return `${program.replace(/\/main\.ts$/, "").replaceAll("/", "-")}.mjs`;
}

/**
 * The node arguments that start a program of the repository (a path from its root, or
 * absolute): its bundle when this run built one, else the source under tsx.
 */
export function programArgs(program: string): string[] {
  const fromRoot = relative(ROOT, resolve(ROOT, program));
  const bundles = process.env[BUNDLES_VARIABLE];
  if (bundles && (BUNDLED_PROGRAMS as readonly string[]).includes(fromRoot))
    return [join(bundles, bundleName(fromRoot))];
  return ["--import", "tsx", join(ROOT, fromRoot)];
}

/** Bundles every program into a folder of this run's own; answers the teardown that removes it. */
export async function buildPrograms(): Promise<() => void> {
  mkdirSync(BUNDLES_PARENT, { recursive: true });
  for (const name of readdirSync(BUNDLES_PARENT)) {
    const path = join(BUNDLES_PARENT, name);
    if (Date.now() - statSync(path).mtimeMs > STALE_AFTER_MS) rmSync(path, { recursive: true, force: true });
  }
  // A folder per run: a second run at the same time (a single file beside `make test`) never reads a half-written bundle.
  const dir = mkdtempSync(join(BUNDLES_PARENT, "run-"));
  await build({
    entryPoints: BUNDLED_PROGRAMS.map((program) => ({
      in: join(ROOT, program),
      out: bundleName(program).slice(0, -4),
    })),
    outdir: dir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
  });
  process.env[BUNDLES_VARIABLE] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}

export default buildPrograms;
