import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

/**
 * The runtime is a supported Node.js LTS: `make` runs everything on the version pinned in
 * .nvmrc (deploy/scripts/ensure-node.sh provides it when the machine's is older), and the
 * packages' `engines` admit it and ask for no Node.js older than their dependencies run on.
 */
const ROOT = join(import.meta.dirname, "../..");
const pinned = readFileSync(join(ROOT, ".nvmrc"), "utf8").trim().replace(/^v/, "");
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
const enginesOf = (pkg: Record<string, unknown>) => (pkg.engines as { node?: string } | undefined)?.node;
const serviceEngines = enginesOf(readJson(join(ROOT, "package.json")));
const sdkEngines = enginesOf(readJson(join(ROOT, "clients/sdk/package.json")));

/** Every package installed in node_modules (scoped ones included), with its `engines.node` when it names one. */
function installedEngines(): Array<{ name: string; node: string }> {
  const found: Array<{ name: string; node: string }> = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.name.startsWith("@")) {
        visit(path);
        continue;
      }
      let pkg: Record<string, unknown>;
      try {
        pkg = readJson(join(path, "package.json"));
      } catch {
        continue;
      }
      const node = enginesOf(pkg);
      if (node !== undefined) found.push({ name: String(pkg.name), node });
      try {
        visit(join(path, "node_modules"));
      } catch {
        // no nested node_modules
      }
    }
  };
  visit(join(ROOT, "node_modules"));
  return found;
}

describe("the Node.js runtime", () => {
  it("the tests run on the pinned LTS's major or a newer one (make puts .tools/node first on PATH)", () => {
    expect(semver.valid(pinned)).toBe(pinned);
    expect(semver.major(process.versions.node)).toBeGreaterThanOrEqual(semver.major(pinned));
  });

  it("the service's and the SDK's engines admit the pinned LTS and no end-of-life Node.js (20 or older)", () => {
    for (const range of [serviceEngines, sdkEngines]) {
      expect(range).toBeDefined();
      expect(semver.satisfies(pinned, range as string)).toBe(true);
      expect(semver.major(semver.minVersion(range as string) as semver.SemVer)).toBeGreaterThanOrEqual(22);
    }
  });

  it("every installed package runs on the lowest Node.js the service's engines admit", () => {
    const floor = semver.minVersion(serviceEngines as string) as semver.SemVer;
    const refusing = installedEngines().filter(({ node }) => semver.validRange(node) && !semver.satisfies(floor, node));
    expect(refusing).toEqual([]);
  });
});
