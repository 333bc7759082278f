/**
 * Runs deploy/tools/manifest-check, the offline validator `make test` builds (target `test-tools`)
 * (deploy/scripts/ensure-manifest-check.sh). A missing build fails the calling test with
 * the script's message: the check is never skipped.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const DEPLOY = join(ROOT, "deploy");

let toolPath: string | undefined;

function manifestCheckPath(): string {
  if (toolPath) return toolPath;
  const found = spawnSync(join(DEPLOY, "scripts", "ensure-manifest-check.sh"), ["--path"], { encoding: "utf8" });
  if (found.status !== 0) throw new Error(`manifest-check is not installed: ${found.stderr.trim()}`);
  toolPath = found.stdout.trim();
  return toolPath;
}

export interface CheckResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** `manifest-check <command> <path>`, with `env` as the whole environment (plus PATH). */
export function runManifestCheck(
  command: "kustomize" | "compose",
  path: string,
  env: Record<string, string> = {},
): CheckResult {
  const result = spawnSync(manifestCheckPath(), [command, path], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ok: result.status === 0, stdout: result.stdout, stderr: result.stderr };
}

/** A Kubernetes object as the build prints it; fields are read loosely and asserted by the tests. */
export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: any;
  data?: Record<string, string>;
};

/** The objects of a kustomization, built and validated; throws with manifest-check's problems. */
export function buildKustomization(dir: string): KubeObject[] {
  const result = runManifestCheck("kustomize", dir);
  if (!result.ok) throw new Error(`manifest-check kustomize ${dir} failed:\n${result.stderr}`);
  return parseAllDocuments(result.stdout).map((doc) => doc.toJS() as KubeObject);
}
