import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The import-boundary messages ESLint reports for `code` placed at `file` (relative to the repo root). */
async function boundaryErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}${file}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === "architecture/import-boundaries").map((m) => m.message);
}

describe("architecture/import-boundaries", () => {
  it("refuses a service importing another service, in any import form", async () => {
    for (const code of [
      `import "../gateway/app.js";`,
      `export * from "../gateway/app.js";`,
      `export { x } from "../../services/gateway/app.js";`,
      `await import("../gateway/app.js");`,
    ]) {
      expect(await boundaryErrors("services/scheduler/scheduler.ts", code), code).toEqual([
        expect.stringContaining("services/scheduler must not import services/gateway"),
      ]);
    }
    expect(await boundaryErrors("services/gateway/rpc/login.ts", `import "../../billing/billing.js";`)).toHaveLength(1);
  });

  it("allows a service's own sub-folder even when it is named like another service", async () => {
    expect(await boundaryErrors("services/gateway/rpc/login.ts", `import "../admin/create-app.js";`)).toEqual([]);
  });

  it("lets services/dev host every service", async () => {
    expect(
      await boundaryErrors(
        "services/dev/main.ts",
        `import "../gateway/gateway.js"; import "../scheduler/scheduler.js";`,
      ),
    ).toEqual([]);
  });

  it("refuses shared/ importing services/", async () => {
    expect(await boundaryErrors("shared/nats/rpc.ts", `import "../../services/gateway/app.js";`)).toEqual([
      expect.stringContaining("shared/ must not import services/gateway"),
    ]);
  });

  it("refuses deep imports into another shared area and allows its index", async () => {
    expect(await boundaryErrors("shared/contract/envelope.ts", `import "../errors/catalogue.js";`)).toEqual([
      expect.stringContaining("Import shared/errors/index.js, not shared/errors/catalogue.js"),
    ]);
    expect(await boundaryErrors("services/billing/billing.ts", `import "../../shared/nats/rpc.js";`)).toHaveLength(1);
    expect(await boundaryErrors("test/integration/x.test.ts", `import "../../shared/nats/names.js";`)).toHaveLength(1);
    expect(await boundaryErrors("shared/contract/envelope.ts", `import "../errors/index.js";`)).toEqual([]);
    expect(await boundaryErrors("services/billing/billing.ts", `import "../../shared/nats/index.js";`)).toEqual([]);
  });

  it("allows relative imports inside one shared area, and tests importing services", async () => {
    expect(await boundaryErrors("shared/nats/rpc.ts", `import "./names.js";`)).toEqual([]);
    expect(await boundaryErrors("test/integration/x.test.ts", `import "../../services/gateway/app.js";`)).toEqual([]);
  });

  it("keeps clients apart from services, and lets only services/dev run the agent", async () => {
    expect(await boundaryErrors("clients/agent/agent.ts", `import "../../services/gateway/app.js";`)).toEqual([
      expect.stringContaining("clients/agent must not import services/gateway"),
    ]);
    expect(await boundaryErrors("services/scheduler/scheduler.ts", `import "../../clients/agent/index.js";`)).toEqual([
      expect.stringContaining("services/scheduler must not import clients/agent"),
    ]);
    expect(
      await boundaryErrors("shared/client/compute-client.ts", `import "../../clients/agent/index.js";`),
    ).toHaveLength(1);
    expect(await boundaryErrors("services/dev/local-agent.ts", `import "../../clients/agent/index.js";`)).toEqual([]);
    expect(await boundaryErrors("clients/agent/agent.ts", `import "../../shared/client/index.js";`)).toEqual([]);
  });

  it("lets clients use the SDK through its entry only, and nothing else of one another", async () => {
    expect(await boundaryErrors("clients/cli/program.ts", `import "../sdk/src/index.js";`)).toEqual([]);
    expect(await boundaryErrors("clients/cli/program.ts", `import "../sdk/src/transport.js";`)).toEqual([
      expect.stringContaining("clients/cli must not import clients/sdk"),
    ]);
    expect(await boundaryErrors("clients/cli/program.ts", `import "../agent/index.js";`)).toEqual([
      expect.stringContaining("clients/cli must not import clients/agent"),
    ]);
  });
});
